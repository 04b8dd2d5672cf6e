// Ctrl-C in a tuning session: while a guard lives, SIGINT only sets a flag
// that the session reads between measurements (the child measuring gets the
// signal too, and its measurement is dropped); the handler before it is back
// when the guard goes.
#pragma once

#include <signal.h>

namespace tessel::driver {

class InterruptGuard {
 public:
  InterruptGuard();
  ~InterruptGuard();
  InterruptGuard(const InterruptGuard&) = delete;
  InterruptGuard& operator=(const InterruptGuard&) = delete;

 private:
  struct sigaction previous_ = {};
};

// Whether SIGINT came since the last guard was made.
bool interrupt_requested();

}  // namespace tessel::driver
