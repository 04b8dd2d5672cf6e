// Formatting and throwing of the two error channels.
#include "ir/core/diagnostics.h"

namespace tessel {

std::string Span::str() const {
  if (node.empty()) return op.empty() ? "" : "(" + op + ")";
  return "node '" + node + "'" + (op.empty() ? "" : " (" + op + ")");
}

ErrorStream::ErrorStream(Kind kind, Span span, const char* file, int line)
    : kind_(kind), span_(std::move(span)), file_(file), line_(line) {}

ErrorStream::~ErrorStream() noexcept(false) {
  std::string where = span_.str();
  std::string text = where.empty() ? message_.str() : where + ": " + message_.str();
  if (kind_ == Kind::kUser) throw UserError(text);
  throw InternalError("internal error, please report: " + text + " [" + file_ + ":" +
                      std::to_string(line_) + "]");
}

}  // namespace tessel
