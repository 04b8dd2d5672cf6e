// XGBoost version query through its C API.
#include "tuner/cost_model/xgboost_info.h"

#include <xgboost/c_api.h>

namespace tessel::tune {

std::string xgboost_version() {
  int major = 0, minor = 0, patch = 0;
  XGBoostVersion(&major, &minor, &patch);
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
}

}  // namespace tessel::tune
