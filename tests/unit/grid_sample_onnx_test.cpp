// GridSample as gathers (adapters_grid_sample.cpp): a bilinear sample worked
// by hand, zeros outside, and the configurations it refuses by name. Every
// mode and padding against ONNX Runtime: tests/model/grid_sample_vs_ort.py.
#include <gtest/gtest.h>

#include "src/driver/compile_model.h"
#include "src/reference/executor.h"
#include "tests/unit/onnx_model_builder.h"

namespace tessel::onnx_test {
namespace {

ModelBuilder grid_sample(std::vector<std::variant<int64_t, std::string>> x_shape,
                         std::vector<std::variant<int64_t, std::string>> grid_shape,
                         const std::string& mode) {
  ModelBuilder b(20);
  b.input("x", std::move(x_shape));
  b.input("grid", std::move(grid_shape));
  onnx::NodeProto* n = b.node("GridSample", {"x", "grid"}, {"y"}, "gs");
  ModelBuilder::set_string(n, "mode", mode);
  ModelBuilder::set_int(n, "align_corners", 1);
  b.output("y");
  return b;
}

// X = [[0, 1], [2, 3]] with corners aligned: (0, 0) is the middle, the mean
// 1.5; (-1, -1) the first pixel; (0.5, -1) three quarters along the top row;
// (3, 0) outside, zero.
TEST(GridSampleOps, ABilinearSampleByHand) {
  ModelBuilder b = grid_sample({1, 1, 2, 2}, {1, 1, 4, 2}, "linear");
  graph::Graph g = b.import();
  std::vector<Tensor> inputs = {f32({0, 1, 2, 3}, {1, 1, 2, 2}),
                                f32({0, 0, -1, -1, 0.5, -1, 3, 0}, {1, 1, 4, 2})};
  std::vector<double> want = {1.5, 0, 0.75, 0};
  EXPECT_EQ(reference::Executor(g).run(inputs)[0].to_f64_vector(), want);
  EXPECT_EQ(driver::JitModel(driver::compile_graph(g, {})).run(inputs)[0].to_f64_vector(), want);
}

TEST(GridSampleOps, UnsupportedConfigurationsAreRefusedByName) {
  struct Case {
    std::vector<std::variant<int64_t, std::string>> x, grid;
    std::string mode, message;
  };
  for (const Case& c : {Case{{1, 1, 2, 2, 2}, {1, 1, 1, 1, 3}, "cubic", "cubic mode samples 2-D X only"},
                        Case{{1, 1, 2, 2}, {1, 1, 1, 2}, "area", "mode must be nearest, linear or cubic"},
                        Case{{1, 1, 2, 2}, {1, 1, 1, 3}, "linear", "grid must be (N, outputs..., 2)"}}) {
    SCOPED_TRACE(c.message);
    ModelBuilder b = grid_sample(c.x, c.grid, c.mode);
    expect_import_error(b, c.message);
  }
}

}  // namespace
}  // namespace tessel::onnx_test
