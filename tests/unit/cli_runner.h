// Runs the `tessel` binary (TESSEL_BINARY) as a separate process for the CLI
// tests: exit code, stdout and stderr, under a time limit and 4 GiB of address
// space, so that a hang shows as code 124, a crash as 128 + the signal, and an
// allocation the input does not justify as "out of memory". Under
// AddressSanitizer (build-asan) there is no address-space limit: its shadow
// memory reserves terabytes of it.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tests/unit/sanitized.h"

namespace tessel::cli_test {

using test_support::kAddressSanitizer;

struct Result {
  int code = -1;
  std::string out, err;
};

inline std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream os;
  os << in.rdbuf();
  return os.str();
}

// s as one single-quoted shell word.
inline std::string quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// Runs `tessel ARGS`, where args is already a shell command line; env: shell
// assignments (NAME=value ...) for that run alone.
inline Result run_tessel_line(const std::string& args, const std::string& env = "") {
  std::filesystem::path base =
      std::filesystem::temp_directory_path() / ("tessel_cli_run_" + std::to_string(::getpid()));
  std::string limit = kAddressSanitizer ? "" : "ulimit -v 4194304; ";
  std::string cmd = limit + env + " timeout 120 " + quote(TESSEL_BINARY) + " " + args + " >" +
                    quote(base.string() + ".out") + " 2>" + quote(base.string() + ".err") + " </dev/null";
  int status = std::system(cmd.c_str());
  Result r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = read_file(base.string() + ".out");
  r.err = read_file(base.string() + ".err");
  std::filesystem::remove(base.string() + ".out");
  std::filesystem::remove(base.string() + ".err");
  return r;
}

// Runs `tessel ARGS...`, each argument quoted.
inline Result run_tessel(const std::vector<std::string>& args) {
  std::string line;
  for (const std::string& a : args) line += (line.empty() ? "" : " ") + quote(a);
  return run_tessel_line(line);
}

inline bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// A user error: code 2 (not 3, not a signal), one message on stderr, nothing on stdout.
inline void expect_user_error(const Result& r, const std::string& message) {
  EXPECT_EQ(r.code, 2) << "stdout: " << r.out << "\nstderr: " << r.err;
  EXPECT_EQ(r.err.rfind("tessel: error: ", 0), 0u) << "stderr: " << r.err;
  EXPECT_TRUE(contains(r.err, message)) << "'" << message << "' is not in stderr: " << r.err;
  EXPECT_EQ(r.out, "");
}

// A folder of its own for the running test, removed with this object.
class TempDir {
 public:
  TempDir() {
    const auto* info = testing::UnitTest::GetInstance()->current_test_info();
    path_ = std::filesystem::temp_directory_path() /
            ("tessel_cli_" + std::to_string(::getpid()) + "_" + info->test_suite_name() + "_" + info->name());
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::filesystem::path operator/(const std::string& file) const { return path_ / file; }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace tessel::cli_test
