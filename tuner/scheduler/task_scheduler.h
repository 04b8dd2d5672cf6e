// Which task the next round of trials goes to: the one whose improvement
// would lower the model's estimated end-to-end latency most, as Ansor's task
// scheduler does. The estimate is sum over tasks of weight * best time; a
// task's gradient mixes how much its best time fell over its last few rounds
// per trial (backward) with an optimistic forward guess (its best time could
// keep falling at the average rate so far: best / trials), times its weight.
// Every task gets one round first (its default schedule measured); a task
// whose search has nothing new to propose is skipped; an epsilon share of
// rounds goes to a random task.
#pragma once

#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

namespace tessel::tune {

struct TaskSchedulerOptions {
  double backward_weight = 0.2;  // Ansor's alpha
  int window = 3;                // rounds the backward difference spans
  double epsilon = 0.05;
};

class TaskScheduler {
 public:
  TaskScheduler(std::vector<double> weights, uint64_t seed, TaskSchedulerOptions options = {});

  // The next task to tune, or SIZE_MAX when every task is done.
  size_t next();
  // After a round of `trials` on task t: its best time so far (infinity while it has none).
  void report(size_t t, int trials, double best_ms);
  void mark_done(size_t t);  // its search space is spent
  // How much t's latency counts from now on (0: only epsilon's random picks
  // reach it, as for a task the model may not run at all).
  void set_weight(size_t t, double weight);

  // sum of weight * best time over the tasks with one; the tasks without one count 0.
  double estimated_ms() const;
  double gradient(size_t t) const;  // the latency change per trial expected from tuning t (<= 0)
  int trials(size_t t) const { return tasks_[t].trials; }

 private:
  struct TaskState {
    double weight = 1;
    int trials = 0;
    std::vector<std::pair<int, double>> history;  // (trials so far, best ms) after each round
    bool done = false;
  };
  std::vector<TaskState> tasks_;
  TaskSchedulerOptions options_;
  std::mt19937_64 rng_;
};

}  // namespace tessel::tune
