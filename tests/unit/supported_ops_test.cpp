// `tessel ops` and the README's operator table come from the importer's own
// tables; these tests keep the list of operators complete and honest.
#include <gtest/gtest.h>

#include <algorithm>

#include "src/frontend/onnx/supported_ops.h"

namespace tessel::onnx_frontend {
namespace {

TEST(SupportedOps, EveryAcceptedNameIsAnOperatorOfTheTable) {
  EXPECT_EQ(unlisted_accepted_ops(), std::vector<std::string>{})
      << "an op the importer accepts is neither in the ONNX library nor in newer_operators()";
}

TEST(SupportedOps, SupportedAndRefusedAreDisjoint) {
  std::vector<OpSupport> ops = supported_ops();
  for (const OpGap& g : unsupported_ops())
    EXPECT_TRUE(std::none_of(ops.begin(), ops.end(), [&](const OpSupport& o) { return o.op == g.op; }))
        << g.op;
  auto find = [&](const std::string& name) {
    return std::find_if(ops.begin(), ops.end(), [&](const OpSupport& o) { return o.op == name; });
  };
  ASSERT_NE(find("Attention"), ops.end());
  EXPECT_EQ(find("Attention")->first_opset, 23);
  EXPECT_TRUE(find("Resize")->composed);
  EXPECT_FALSE(find("Conv")->composed);
  EXPECT_TRUE(find("SequenceMap")->structural);
  EXPECT_FALSE(find("Identity")->structural);
}

}  // namespace
}  // namespace tessel::onnx_frontend
