// The two error channels: TESSEL_USER_CHECK for what a user caused (it names
// the place, usually an ONNX node), TESSEL_ICHECK for our own invariants.
#pragma once

#include <sstream>
#include <string>

#include "tessel/error.h"

namespace tessel {

// Where a user error happened: the ONNX node (name and op), when there is one.
struct Span {
  std::string node;
  std::string op;

  bool empty() const { return node.empty() && op.empty(); }
  std::string str() const;
};

// Collects a message with operator<< and throws when it goes out of scope.
// Only ever a temporary inside the check macros below.
class ErrorStream {
 public:
  enum class Kind { kUser, kInternal };
  ErrorStream(Kind kind, Span span, const char* file, int line);
  ErrorStream(const ErrorStream&) = delete;
  ~ErrorStream() noexcept(false);

  template <typename T>
  ErrorStream& operator<<(const T& value) {
    message_ << value;
    return *this;
  }

 private:
  Kind kind_;
  Span span_;
  const char* file_;
  int line_;
  std::ostringstream message_;
};

}  // namespace tessel

#define TESSEL_USER_CHECK(cond, span) \
  if (cond) {                         \
  } else                              \
    ::tessel::ErrorStream(::tessel::ErrorStream::Kind::kUser, (span), __FILE__, __LINE__)

#define TESSEL_USER_ERROR(span) \
  ::tessel::ErrorStream(::tessel::ErrorStream::Kind::kUser, (span), __FILE__, __LINE__)

#define TESSEL_ICHECK(cond)                                                                    \
  if (cond) {                                                                                  \
  } else                                                                                       \
    ::tessel::ErrorStream(::tessel::ErrorStream::Kind::kInternal, ::tessel::Span{}, __FILE__, \
                          __LINE__)                                                            \
        << "check failed: " #cond ": "
