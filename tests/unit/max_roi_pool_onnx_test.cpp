// MaxRoiPool (adapters_max_roi_pool.cpp) worked by hand on a 4x4 image, on
// the reference executor and compiled: bins split by floor and ceil of the
// box's extent, a box reaching outside the image clamped, a box wholly
// outside giving zeros; malformed attributes and a batch index outside the
// batch refused.
#include <gtest/gtest.h>

#include "src/driver/compile_model.h"
#include "src/passes/dead_code.h"
#include "src/reference/executor.h"
#include "tests/unit/onnx_model_builder.h"

namespace tessel::onnx_test {
namespace {

ModelBuilder pool_model(std::vector<int64_t> pooled) {
  ModelBuilder b(16);
  b.input("x", {1, 1, 4, 4});
  b.input("rois", {3, 5});
  ModelBuilder::set_ints(b.node("MaxRoiPool", {"x", "rois"}, {"y"}, "pool"), "pooled_shape", pooled);
  b.output("y");
  return b;
}

TEST(MaxRoiPool, BinsTakeTheMaximumOfThePixelsTheyCover) {
  ModelBuilder b = pool_model({2, 2});
  // x[h][w] = 4h + w. Box 0 covers rows 0..2 and columns 1..3 (extent 3: bins
  // [0, 2) and [1, 3) from floor(0), ceil(1.5) and floor(1.5), ceil(3)).
  // Box 1 starts above and left of the image: rows and columns -2..1, bins
  // [-2, 0) (clamped: empty, 0) and [0, 2). Box 2 lies outside: zeros.
  Tensor x = f32({0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}, {1, 1, 4, 4});
  Tensor rois = f32({0, 1, 0, 3, 2, 0, -2, -2, 1, 1, 0, 7, 7, 9, 9}, {3, 5});
  std::vector<double> want{6, 7, 10, 11, 0, 0, 0, 5, 0, 0, 0, 0};
  graph::Graph ref = b.import();
  EXPECT_EQ(reference::Executor(ref).run({x, rois})[0].to_f64_vector(), want);
  graph::Graph g = b.import();
  passes::eliminate_dead_code(g);
  driver::JitModel jit(driver::compile_graph(g, {}));
  Tensor y = jit.run({x, rois})[0];
  EXPECT_EQ(y.shape(), (Dims{3, 1, 2, 2}));
  EXPECT_EQ(y.to_f64_vector(), want);
  rois.set_f64(0, 1);  // a batch index past the one image
  EXPECT_THROW(jit.run({x, rois}), std::exception);
}

TEST(MaxRoiPool, MalformedAttributesAreRefusedByName) {
  ModelBuilder b = pool_model({2, 0});
  expect_import_error(b, "node 'pool' (MaxRoiPool): pooled_shape must be two positive extents");
  ModelBuilder huge = pool_model({100000, 100000});
  expect_import_error(huge, "masks every pixel of every bin of every box: more than 2147483648 entries");
}

}  // namespace
}  // namespace tessel::onnx_test
