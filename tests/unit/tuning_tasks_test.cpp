// The tuner's tasks (src/driver/tuning_tasks.h): kernels whose lowered
// functions differ only in names (of values, nodes and blocks) are one task
// with their count as its weight; a different shape is another task; the
// task table lists every task once, the costliest first, and its shares add
// up to the time in kernels.
#include "src/driver/tuning_tasks.h"

#include <gtest/gtest.h>

#include <sstream>

#include "ir/graph/op_registry.h"
#include "ir/tensor/printer.h"
#include "tests/unit/fusion_test_util.h"

namespace tessel {
namespace {

using graph::Value;
using fusion_test::random_tensor;

// x -> conv3x3+relu (8 -> 8) -> conv3x3+relu (8 -> 8) -> conv3x3+relu (8 -> 16):
// the first two are one task, the third (more output channels) another.
graph::Graph three_convs() {
  graph::Graph g;
  Value* x = g.add_input("x", graph::TensorType(DType::kF32, {1, 8, 12, 12}));
  uint32_t seed = 1;
  for (auto [name, out] : {std::pair{"a", 8}, std::pair{"b", 8}, std::pair{"c", 16}}) {
    graph::Attrs pads;
    pads.set("pads", std::vector<int64_t>(4, 1));
    Value* w = g.add_constant(std::string(name) + ".w", random_tensor({out, 8, 3, 3}, seed++));
    graph::Node* conv = g.add_node("Conv", name, {x, w}, {std::string(name) + "_out"}, pads);
    graph::infer_node(*conv);
    graph::Node* relu = g.add_node("Relu", std::string(name) + "_relu", {conv->outputs[0]},
                                   {std::string(name) + "_relu_out"}, {});
    graph::infer_node(*relu);
    x = relu->outputs[0];
  }
  g.set_outputs({x});
  return g;
}

TEST(TuningTasks, KernelsDifferingOnlyInNamesAreOneTask) {
  graph::Graph g = three_convs();
  driver::CompiledGraph compiled = driver::compile_graph(g, driver::CompileOptions{});
  ASSERT_EQ(compiled.kernels.size(), 3u);
  std::vector<driver::TuningTask> tasks = driver::extract_tasks(compiled);
  ASSERT_EQ(tasks.size(), 2u);
  EXPECT_EQ(tasks[0].kernels, (std::vector<size_t>{0, 1}));
  EXPECT_EQ(tasks[1].kernels, (std::vector<size_t>{2}));
  EXPECT_EQ(tasks[0].weight(), 2u);
  EXPECT_EQ(tasks[0].key.size(), 16u);
  EXPECT_NE(tasks[0].key, tasks[1].key);
  EXPECT_DOUBLE_EQ(tasks[0].flops, compiled.kernels[0].flops);
  // The task's function names its blocks by position, and its key is its hash.
  std::string text = tir::to_string(tasks[0].func);
  EXPECT_NE(text.find("block b1"), std::string::npos) << text;
  EXPECT_EQ(driver::task_key(tasks[0].func), tasks[0].key);
  // With their own block names the two kernels' functions differ: the key is not the raw hash.
  EXPECT_NE(driver::task_key(compiled.kernels[0].group.func), driver::task_key(compiled.kernels[1].group.func));
  // The activation a task reads is warm when it is measured (its producer has
  // just written it in a model run); its weight (packed or not) and bias are not.
  for (const driver::TuningTask& t : tasks) {
    ASSERT_EQ(t.warm_inputs.size(), t.func->inputs.size());
    for (size_t i = 0; i < t.func->inputs.size(); ++i)
      EXPECT_EQ(t.warm_inputs[i], t.func->inputs[i]->shape == std::vector<int64_t>({1, 8, 12, 12}))
          << t.func->inputs[i]->name;
  }
}

TEST(TuningTasks, TheTableListsEachTaskOnceCostliestFirst) {
  graph::Graph g = three_convs();
  driver::CompiledGraph compiled = driver::compile_graph(g, driver::CompileOptions{});
  std::vector<driver::TuningTask> tasks = driver::extract_tasks(compiled);
  driver::ModelProfile profile;
  for (size_t i = 0; i < compiled.kernels.size(); ++i)
    profile.kernels.push_back({{compiled.kernels[i].symbol, compiled.kernels[i].flops, 0}, i == 2 ? 3.0 : 1.0});
  profile.end_to_end.median_ms = 5.5;
  std::ostringstream out;
  driver::print_task_table(tasks, profile, out);
  std::string table = out.str();
  EXPECT_NE(table.find("2 tasks for 3 kernel calls per run"), std::string::npos) << table;
  size_t second = table.find(tasks[1].key), first = table.find(tasks[0].key);
  ASSERT_NE(first, std::string::npos) << table;
  ASSERT_NE(second, std::string::npos) << table;
  EXPECT_LT(second, first) << "3 ms (60%) comes before 2 x 1 ms (40%):\n" << table;
  EXPECT_NE(table.find("60.0%"), std::string::npos) << table;
  EXPECT_NE(table.find("40.0%"), std::string::npos) << table;
  EXPECT_NE(table.find("in kernels: 5.000 ms of an end-to-end median of 5.500 ms"), std::string::npos) << table;
}

}  // namespace
}  // namespace tessel
