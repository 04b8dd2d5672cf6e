// A small command-line parser: flags are taken out by name, what is left
// must be positional, so a misspelt option is reported, never ignored.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace tessel::cli {

class Args {
 public:
  Args(int argc, char** argv, int first);

  // "--name VALUE" or "--name=VALUE"; the last one wins.
  std::optional<std::string> value(const std::string& name);
  std::vector<std::string> values(const std::string& name);  // every occurrence
  bool flag(const std::string& name);                        // "--name"
  // The remaining arguments; any that starts with '-' is a UserError.
  std::vector<std::string> positionals();

 private:
  std::vector<std::string> tokens_;
};

int64_t parse_int(const std::string& text, const std::string& option);

}  // namespace tessel::cli
