// The XGBoost library behind the learned cost model: its version.
#pragma once

#include <string>

namespace tessel::tune {

std::string xgboost_version();  // "1.7.4"

}  // namespace tessel::tune
