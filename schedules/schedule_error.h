// ScheduleError: an illegal schedule request. It carries a short kind (cheap,
// for the tuner's inner loop, which drops the candidate) and a detailed
// message for people (what was asked, and why it cannot be done).
#pragma once

#include <stdexcept>
#include <string>

namespace tessel::sched {

class ScheduleError : public std::runtime_error {
 public:
  // kind: a stable identifier such as "split.not_divisible"; detail: the full message.
  ScheduleError(std::string kind, const std::string& detail)
      : std::runtime_error(kind + ": " + detail), kind_(std::move(kind)) {}
  const std::string& kind() const { return kind_; }

 private:
  std::string kind_;
};

}  // namespace tessel::sched
