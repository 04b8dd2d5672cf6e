#include "tuner/measure/isolated.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <exception>

#include "ir/core/diagnostics.h"
#include "tuner/write_all.h"

namespace tessel::tune {

namespace {

// The child's report: one status byte ('+' a result, '!' an error), then the
// text. A failed write leaves the parent an incomplete report: no result.
void report(int fd, char status, const std::string& text) { write_all(fd, status + text); }

[[noreturn]] void run_child(int fd, const std::function<std::string()>& work) {
  // A crash is the default action of its signal, whatever handlers the
  // parent installed (a sanitizer's would turn it into an exit status).
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) ::signal(sig, SIG_DFL);
  try {
    report(fd, '+', work());
  } catch (const std::exception& e) {
    report(fd, '!', e.what());
  } catch (...) {
    report(fd, '!', "an unknown exception");
  }
  ::close(fd);
  ::_exit(0);  // no static destructors or atexit handlers of the parent's state
}

// Reads the child's report until end of file or the deadline; false at the deadline.
bool read_report(int fd, std::chrono::steady_clock::time_point deadline, std::string& text) {
  char buffer[4096];
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    pollfd p{fd, POLLIN, 0};
    int ready = ::poll(&p, 1, int(std::min<int64_t>(left.count(), 1000)));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) continue;
    ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return true;  // end of file: the child is done (or dead)
    text.append(buffer, size_t(n));
  }
}

std::string seconds_text(double s) {
  std::string t = std::to_string(s);
  t.erase(t.find_last_not_of('0') + 1);
  if (!t.empty() && t.back() == '.') t.pop_back();
  return t;
}

}  // namespace

IsolatedResult run_isolated(const std::function<std::string()>& work, double timeout_s) {
  int fds[2];
  TESSEL_USER_CHECK(::pipe2(fds, O_CLOEXEC) == 0, Span{}) << "cannot make a pipe: " << std::strerror(errno);
  pid_t child = ::fork();
  if (child < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    TESSEL_USER_ERROR(Span{}) << "cannot start a measurement process: " << std::strerror(errno);
  }
  if (child == 0) {
    ::close(fds[0]);
    run_child(fds[1], work);
  }
  ::close(fds[1]);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  std::string text;
  bool finished = read_report(fds[0], std::chrono::time_point_cast<std::chrono::steady_clock::duration>(deadline), text);
  ::close(fds[0]);
  if (!finished) ::kill(child, SIGKILL);
  int status = 0;
  while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  IsolatedResult r;
  if (!finished) {
    r.error = "timed out after " + seconds_text(timeout_s) + " s";
  } else if (WIFSIGNALED(status)) {
    r.error = std::string("crashed: ") + ::strsignal(WTERMSIG(status));
  } else if (text.empty()) {
    r.error = "exited with status " + std::to_string(WEXITSTATUS(status)) + " and no result";
  } else if (text[0] == '!') {
    r.error = text.substr(1);
  } else {
    r.ok = true;
    r.output = text.substr(1);
  }
  return r;
}

}  // namespace tessel::tune
