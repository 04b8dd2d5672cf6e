#include "tuner/scheduler/task_scheduler.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "schedules/primitives/loop_primitives.h"

namespace tessel::tune {

TaskScheduler::TaskScheduler(std::vector<double> weights, uint64_t seed, TaskSchedulerOptions options)
    : options_(options), rng_(seed) {
  for (double w : weights) {
    TaskState s;
    s.weight = w;
    tasks_.push_back(s);
  }
}

void TaskScheduler::report(size_t t, int trials, double best_ms) {
  TaskState& s = tasks_.at(t);
  s.trials += trials;
  s.history.emplace_back(s.trials, best_ms);
}

void TaskScheduler::mark_done(size_t t) { tasks_.at(t).done = true; }

void TaskScheduler::set_weight(size_t t, double weight) {
  tasks_.at(t).weight = weight;
}

double TaskScheduler::estimated_ms() const {
  double total = 0;
  for (const TaskState& s : tasks_)
    if (!s.history.empty() && std::isfinite(s.history.back().second)) total += s.weight * s.history.back().second;
  return total;
}

double TaskScheduler::gradient(size_t t) const {
  const TaskState& s = tasks_.at(t);
  if (s.history.empty() || s.trials == 0) return -std::numeric_limits<double>::infinity();
  double best = s.history.back().second;
  if (!std::isfinite(best)) return -std::numeric_limits<double>::infinity();  // nothing measured ran yet
  size_t back = s.history.size() > size_t(options_.window) ? s.history.size() - 1 - size_t(options_.window) : 0;
  double backward = 0;
  int span = s.trials - s.history[back].first;
  if (span > 0 && std::isfinite(s.history[back].second)) backward = (best - s.history[back].second) / span;
  double forward = -best / s.trials;
  return s.weight * (options_.backward_weight * backward + (1 - options_.backward_weight) * forward);
}

size_t TaskScheduler::next() {
  std::vector<size_t> open;
  for (size_t t = 0; t < tasks_.size(); ++t)
    if (!tasks_[t].done) open.push_back(t);
  if (open.empty()) return SIZE_MAX;
  for (size_t t : open)
    if (tasks_[t].history.empty()) return t;  // the first round of each task
  if (double(rng_() >> 11) * 0x1.0p-53 < options_.epsilon) return open[sched::uniform_below(rng_, open.size())];
  return *std::min_element(open.begin(), open.end(), [&](size_t a, size_t b) { return gradient(a) < gradient(b); });
}

}  // namespace tessel::tune
