// Public error types of the Tessel compiler API. A UserError is something the
// caller caused (bad model, bad option); an InternalError is a broken invariant.
#pragma once

#include <stdexcept>
#include <string>

namespace tessel {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Reported to people as the message alone, exit code 2 at the command line.
class UserError : public Error {
 public:
  using Error::Error;
};

// "internal error, please report", exit code 3 at the command line.
class InternalError : public Error {
 public:
  using Error::Error;
};

}  // namespace tessel
