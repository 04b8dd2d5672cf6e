#include "src/driver/tune_interrupt.h"

#include <csignal>

namespace tessel::driver {

namespace {

volatile std::sig_atomic_t interrupted_flag = 0;

extern "C" void on_interrupt(int) {
  interrupted_flag = 1;
}

}  // namespace

InterruptGuard::InterruptGuard() {
  interrupted_flag = 0;
  struct sigaction action = {};
  action.sa_handler = on_interrupt;
  sigemptyset(&action.sa_mask);
  ::sigaction(SIGINT, &action, &previous_);
}

InterruptGuard::~InterruptGuard() {
  ::sigaction(SIGINT, &previous_, nullptr);
}

bool interrupt_requested() {
  return interrupted_flag != 0;
}

}  // namespace tessel::driver
