// The grouping policies, one per file; fusion.h's make_grouping_policy picks one.
#pragma once

#include <memory>

#include "src/passes/fusion.h"

namespace tessel::passes::fusion {

std::unique_ptr<GroupingPolicy> make_no_grouping();          // none.cpp
std::unique_ptr<GroupingPolicy> make_injective_grouping();   // injective.cpp
std::unique_ptr<GroupingPolicy> make_simple_grouping();      // simple.cpp
std::unique_ptr<GroupingPolicy> make_default_grouping();     // default.cpp
std::unique_ptr<GroupingPolicy> make_aggressive_grouping();  // aggressive.cpp

}  // namespace tessel::passes::fusion
