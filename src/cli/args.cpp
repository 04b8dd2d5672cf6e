// Command-line argument extraction.
#include "src/cli/args.h"

#include <charconv>
#include <string_view>

#include "ir/core/diagnostics.h"

namespace tessel::cli {

namespace {

// Every option of every command that takes a value. "NAME VALUE" is joined to
// "NAME=VALUE" before any option is taken out, so that a value is never read
// as an option or a positional, whatever the order in which a command asks
// for its options: in `compile m.onnx -o -mcpu=x.so` the output is
// "-mcpu=x.so", not a CPU. A command that adds a valued option adds it here.
constexpr std::string_view kValued[] = {"-o",
                                        "--output",
                                        "--fusion",
                                        "--schedule",
                                        "--target",
                                        "-mcpu",
                                        "-mattr",
                                        "--inputs",
                                        "--out",
                                        "--seed",
                                        "--repeat",
                                        "--threads",
                                        "--list",
                                        "--timeout",
                                        "--node",
                                        "--tolerance",
                                        "--input-shape",
                                        "--log",
                                        "--trials",
                                        "--per-round",
                                        "--search",
                                        "--cost-model",
                                        "--save-cost-model",
                                        "--events",
                                        "--tuning-log",
                                        "--cache-flush",
                                        "--sample-knobs",
                                        "--layouts",
                                        "--channels-last",
                                        "--qdq",
                                        "--sequence-length",
                                        "--empty-optional"};

bool takes_value(const std::string& token) {
  for (std::string_view name : kValued)
    if (token == name) return true;
  return false;
}

}  // namespace

Args::Args(int argc, char** argv, int first) {
  for (int i = first; i < argc; ++i) {
    std::string t = argv[i];
    if (takes_value(t) && i + 1 < argc) t += "=" + std::string(argv[++i]);
    tokens_.push_back(std::move(t));
  }
}

std::vector<std::string> Args::values(const std::string& name) {
  std::vector<std::string> out, rest;
  for (size_t i = 0; i < tokens_.size(); ++i) {
    const std::string& t = tokens_[i];
    if (t == name) {
      TESSEL_USER_CHECK(i + 1 < tokens_.size(), Span{}) << "option " << name << " needs a value";
      out.push_back(tokens_[++i]);
    } else if (t.rfind(name + "=", 0) == 0) {
      out.push_back(t.substr(name.size() + 1));
    } else {
      rest.push_back(t);
    }
  }
  tokens_ = std::move(rest);
  return out;
}

std::optional<std::string> Args::value(const std::string& name) {
  std::vector<std::string> all = values(name);
  if (all.empty()) return std::nullopt;
  return all.back();
}

bool Args::flag(const std::string& name) {
  size_t before = tokens_.size();
  std::erase(tokens_, name);
  return tokens_.size() != before;
}

std::vector<std::string> Args::positionals() {
  for (const std::string& t : tokens_)
    TESSEL_USER_CHECK(t.empty() || t[0] != '-' || t == "-", Span{}) << "unknown option " << t << " (see --help)";
  return tokens_;
}

int64_t parse_int(const std::string& text, const std::string& option) {
  int64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  TESSEL_USER_CHECK(ec == std::errc() && end == text.data() + text.size(), Span{})
      << "option " << option << " expects an integer, got '" << text << "'";
  return v;
}

}  // namespace tessel::cli
