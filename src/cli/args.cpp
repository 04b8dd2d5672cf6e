// Command-line argument extraction.
#include "src/cli/args.h"

#include <charconv>

#include "ir/core/diagnostics.h"

namespace tessel::cli {

Args::Args(int argc, char** argv, int first) {
  for (int i = first; i < argc; ++i) tokens_.emplace_back(argv[i]);
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
