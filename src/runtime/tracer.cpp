#include "src/runtime/tracer.h"

#include <atomic>
#include <chrono>
#include <mutex>

namespace tessel::rt {

namespace {

using Clock = std::chrono::steady_clock;

std::mutex owner;  // held by the traced run, from begin() to end()
std::atomic<bool> active{false};
tessel_trace_span* buffer = nullptr;
int32_t buffer_capacity = 0;
std::atomic<int32_t> recorded{0};
std::atomic<int32_t> current_step{0};
Clock::time_point start;
thread_local bool t_tracing = false;  // this thread began the traced run

}  // namespace

bool Tracer::begin(tessel_trace_span* spans, int32_t capacity) {
  if (!owner.try_lock()) return false;
  buffer = spans;
  buffer_capacity = capacity;
  recorded.store(0, std::memory_order_relaxed);
  current_step.store(0, std::memory_order_relaxed);
  start = Clock::now();
  t_tracing = true;
  active.store(true, std::memory_order_release);
  return true;
}

int32_t Tracer::end() {
  active.store(false, std::memory_order_release);
  t_tracing = false;
  int32_t n = recorded.load(std::memory_order_acquire);
  buffer = nullptr;
  owner.unlock();
  return n;
}

bool Tracer::on() {
  return t_tracing && active.load(std::memory_order_acquire);
}

void Tracer::set_step(int32_t step) {
  current_step.store(step, std::memory_order_release);
}

double Tracer::now() {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

void Tracer::record(tessel_trace_kind kind, int32_t thread, double begin_seconds, double end_seconds) {
  int32_t i = recorded.fetch_add(1, std::memory_order_acq_rel);
  if (i >= buffer_capacity) return;
  buffer[i] = {current_step.load(std::memory_order_acquire), thread, kind, 0, begin_seconds, end_seconds};
}

}  // namespace tessel::rt
