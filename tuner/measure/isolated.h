// Running what may crash or hang without taking the tuning session down: the
// work runs in a child process (fork), reports a result as text through a
// pipe, and is killed when it overruns its time. A crash (a signal), an exit
// without a result, a thrown error and a timeout each come back as an error
// message; the session records it and goes on.
#pragma once

#include <functional>
#include <string>

namespace tessel::tune {

struct IsolatedResult {
  bool ok = false;
  std::string output;  // what the work returned (ok)
  std::string error;   // why there is no output: "timed out after 2 s", "crashed: Segmentation fault", ...
};

// Runs work() in a child process and waits at most timeout_s seconds for
// it. The child must not rely on threads of this process (only the forking
// thread exists there): it makes its own thread pool when it needs one.
IsolatedResult run_isolated(const std::function<std::string()>& work, double timeout_s);

}  // namespace tessel::tune
