// How the default schedules apply a rule: whole or not at all.
#pragma once

#include <utility>

#include "schedules/schedule.h"
#include "schedules/schedule_error.h"

namespace tessel::sched {

// Runs a rule on a copy of the schedule and keeps the copy only when every
// step was legal; false, and sch unchanged, when a primitive refused.
template <class Rule>
bool attempt(Schedule& sch, Rule&& rule) {
  Schedule trial = sch;
  try {
    rule(trial);
  } catch (const ScheduleError&) {
    return false;
  }
  sch = std::move(trial);
  return true;
}

}  // namespace tessel::sched
