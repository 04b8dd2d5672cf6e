// A program run to completion with its output captured: the C compiler that
// links a model library, the host compiler that builds emulated CUDA C.
// posix_spawnp, no shell.
#pragma once

#include <string>
#include <vector>

namespace tessel {

struct FinishedProcess {
  int exit_status = 0;      // -1: killed by a signal
  std::string output;       // stdout and stderr together
  std::string spawn_error;  // non-empty: the program could not be started (strerror)
};

// Runs argv[0] from PATH (argv[0] may be a path) and waits for it.
FinishedProcess run_capturing(const std::vector<std::string>& argv);

// A variable such as $CC or $CXX that may carry words of its own ("ccache gcc"), split as a shell splits
// an unquoted variable.
std::vector<std::string> split_words(const std::string& s);

// The argv as one line, for error messages.
std::string command_line(const std::vector<std::string>& argv);

}  // namespace tessel
