// Convolutions of 16-bit floats: the reference runs them on f32 copies and
// rounds the result once, as the lowering computes them; each is checked
// against the other (check_op).
#include "tests/unit/lower_nn_test_util.h"

namespace tessel::lower_nn_test {
namespace {

TEST(LowerNnHalf, ConvolutionsOfHalfFloatsMatchTheReference) {
  for (DType t : {DType::kF16, DType::kBF16}) {
    SCOPED_TRACE(dtype_name(t));
    check_op("Conv", "conv", {rand_arg(t, {1, 2, 5, 6}), rand_arg(t, {3, 2, 3, 3}), rand_arg(t, {3})},
             attrs(kv("pads", std::vector<int64_t>{1, 1, 1, 1})), 1, 1e-2);
    check_op("Conv", "depthwise", {rand_arg(t, {2, 4, 9}), rand_arg(t, {4, 1, 4})},
             attrs(kv("group", int64_t(4))), 1, 1e-2);  // CausalConvWithState's expanded form
    check_op("ConvTranspose", "up", {rand_arg(t, {1, 2, 3, 3}), rand_arg(t, {2, 3, 2, 2})},
             attrs(kv("strides", std::vector<int64_t>{2, 2})), 1, 1e-2);
  }
}

}  // namespace
}  // namespace tessel::lower_nn_test
