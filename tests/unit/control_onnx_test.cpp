// ONNX's If, Loop and Scan with their subgraphs (adapters_control.cpp,
// graph_importer.cpp): outer values read inside a body, an If chosen while
// compiling (inlined) and at run time (both branches compiled, one run),
// Scan's axes and directions (Scan-8's batch axis), a Loop with a known trip count (as a loop, and
// unrolled when its shapes follow the iteration), and the refusals. Values
// are worked out by hand; each runs on the reference and compiled.
#include <gtest/gtest.h>

#include "src/driver/compile_model.h"
#include "src/passes/dead_code.h"
#include "src/reference/executor.h"
#include "tests/unit/onnx_model_builder.h"

namespace tessel::onnx_test {
namespace {

Tensor boolean(bool v) {
  Tensor t(DType::kBool, {});
  t.set_f64(0, v ? 1 : 0);
  return t;
}

// A subgraph attribute of n, built by `fill` on its GraphProto.
onnx::GraphProto* subgraph(onnx::NodeProto* n, const std::string& attr) {
  auto* a = n->add_attribute();
  a->set_name(attr);
  a->set_type(onnx::AttributeProto::GRAPH);
  a->mutable_g()->set_name(attr);
  return a->mutable_g();
}

onnx::NodeProto* add(onnx::GraphProto* g, const std::string& op, std::vector<std::string> ins,
                     std::vector<std::string> outs) {
  auto* n = g->add_node();
  n->set_op_type(op);
  n->set_name(outs[0] + "_node");
  for (auto& i : ins) n->add_input(i);
  for (auto& o : outs) n->add_output(o);
  return n;
}

void typed(onnx::ValueInfoProto* vi, const std::string& name, std::vector<int64_t> dims,
           int type = onnx::TensorProto::FLOAT) {
  ModelBuilder::value_info(vi, name, {dims.begin(), dims.end()}, type);
}

void expect_both(graph::Graph& g, const std::vector<Tensor>& inputs,
                 const std::vector<std::vector<double>>& want) {
  std::vector<Tensor> ref = reference::Executor(g).run(inputs);
  driver::JitModel jit(driver::compile_graph(g, {}));
  std::vector<Tensor> out = jit.run(inputs);
  for (size_t k = 0; k < want.size(); ++k) {
    EXPECT_EQ(ref[k].to_f64_vector(), want[k]) << "reference output " << k;
    EXPECT_EQ(out[k].to_f64_vector(), want[k]) << "compiled output " << k;
  }
}

bool has_op(const graph::Graph& g, const std::string& op) {
  for (const graph::Node* n : g.nodes())
    if (n->op == op) return true;
  return false;
}

// y = If(cond) then x + 1 else x * w, w a weight of the outer graph.
ModelBuilder if_model(bool constant_condition, bool value) {
  ModelBuilder b(16);
  b.input("x", {3});
  if (constant_condition) {
    auto* t = b.g->add_initializer();
    t->set_name("cond");
    t->set_data_type(onnx::TensorProto::BOOL);
    t->add_int32_data(value ? 1 : 0);
  } else {
    b.input("cond", {}, onnx::TensorProto::BOOL);
  }
  b.float_initializer("w", {3}, {2, 3, 4});
  b.float_initializer("one", {}, {1});
  onnx::NodeProto* n = b.node("If", {"cond"}, {"y"}, "choose");
  onnx::GraphProto* then_branch = subgraph(n, "then_branch");
  add(then_branch, "Add", {"x", "one"}, {"plus"});
  typed(then_branch->add_output(), "plus", {3});
  onnx::GraphProto* else_branch = subgraph(n, "else_branch");
  add(else_branch, "Mul", {"x", "w"}, {"times"});
  typed(else_branch->add_output(), "times", {3});
  b.output("y");
  return b;
}

TEST(ControlFlowOps, IfChosenWhileCompilingIsInlined) {
  for (bool value : {true, false}) {
    ModelBuilder b = if_model(true, value);
    graph::Graph g = b.import();
    EXPECT_FALSE(has_op(g, "Scan"));
    expect_both(g, {f32({1, 2, 3}, {3})},
                {value ? std::vector<double>{2, 3, 4} : std::vector<double>{2, 6, 12}});
  }
}

TEST(ControlFlowOps, IfChosenAtRunTimeRunsOneBranch) {
  ModelBuilder b = if_model(false, false);
  graph::Graph g = b.import();
  EXPECT_TRUE(has_op(g, "Scan"));
  std::vector<Tensor> yes = {f32({1, 2, 3}, {3}), boolean(true)}, no = {f32({1, 2, 3}, {3}), boolean(false)};
  std::vector<Tensor> ref_yes = reference::Executor(g).run(yes), ref_no = reference::Executor(g).run(no);
  EXPECT_EQ(ref_yes[0].to_f64_vector(), (std::vector<double>{2, 3, 4}));
  EXPECT_EQ(ref_no[0].to_f64_vector(), (std::vector<double>{2, 6, 12}));
  driver::CompiledGraph compiled = driver::compile_graph(g, {});
  ASSERT_EQ(compiled.plan.loops.size(), 2u);
  EXPECT_NE(compiled.plan.loops[0].condition, rt::kNoCondition);
  driver::JitModel jit(std::move(compiled));
  EXPECT_EQ(jit.run(yes)[0].to_f64_vector(), (std::vector<double>{2, 3, 4}));
  EXPECT_EQ(jit.run(no)[0].to_f64_vector(), (std::vector<double>{2, 6, 12}));
}

// A Scan's body of one [2] state and one [2] slice: next = acc + slice,
// returned as the state and as the scanned output.
void add_running_sum_body(onnx::NodeProto* scan) {
  onnx::GraphProto* body = subgraph(scan, "body");
  typed(body->add_input(), "acc", {2});
  typed(body->add_input(), "slice", {2});
  add(body, "Add", {"acc", "slice"}, {"next"});
  add(body, "Identity", {"next"}, {"out"});
  typed(body->add_output(), "next", {2});
  typed(body->add_output(), "out", {2});
}

// Scan-9 summing x [2, 3] along axis 1, backwards, the running sums stacked along axis 1.
TEST(ControlFlowOps, ScanAxesAndDirections) {
  ModelBuilder b(11);
  b.input("x", {2, 3});
  b.input("s0", {2});
  onnx::NodeProto* n = b.node("Scan", {"s0", "x"}, {"s", "ys"}, "scan");
  ModelBuilder::set_int(n, "num_scan_inputs", 1);
  auto ints = [&](const char* name, int64_t v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INTS);
    a->add_ints(v);
  };
  ints("scan_input_axes", 1);
  ints("scan_input_directions", 1);
  ints("scan_output_axes", -1);
  add_running_sum_body(n);
  b.output("s");
  b.output("ys");
  graph::Graph g = b.import();
  // Columns 2, 1, 0 of [[1, 2, 3], [4, 5, 6]] onto [10, 20]: 13 15 16 and 26 31 35.
  expect_both(g, {f32({1, 2, 3, 4, 5, 6}, {2, 3}), f32({10, 20}, {2})}, {{16, 35}, {13, 15, 16, 26, 31, 35}});
}

// Loop with M = 3: y += x * (i + 1) for i = 0, 1, 2, each y scanned; x read
// from outside. Sliced: x [3], y [1], and the term is x[i : i + 1].
ModelBuilder loop_model(bool slice_at_iteration) {
  ModelBuilder b(13);
  b.input("x", {slice_at_iteration ? 3 : 2});
  b.input("y0", {slice_at_iteration ? 1 : 2});
  b.int64_initializer("trips", {}, {3});
  onnx::NodeProto* n = b.node("Loop", {"trips", "", "y0"}, {"y", "ys"}, "loop");
  onnx::GraphProto* body = subgraph(n, "body");
  typed(body->add_input(), "i", {}, onnx::TensorProto::INT64);
  typed(body->add_input(), "keep_going", {}, onnx::TensorProto::BOOL);
  typed(body->add_input(), "y_in", {2});
  auto* one = body->add_initializer();
  one->set_name("one");
  one->set_data_type(onnx::TensorProto::INT64);
  one->add_int64_data(1);
  add(body, "Add", {"i", "one"}, {"i1"});
  add(body, "Cast", {"i1"}, {"scale"})->add_attribute()->CopyFrom([] {
    onnx::AttributeProto a;
    a.set_name("to");
    a.set_type(onnx::AttributeProto::INT);
    a.set_i(onnx::TensorProto::FLOAT);
    return a;
  }());
  std::string term = "x";
  if (slice_at_iteration) {  // x[i : i + 1], broadcast: the shapes follow the iteration
    auto* axes = body->add_initializer();
    axes->set_name("zero_axis");
    axes->set_data_type(onnx::TensorProto::INT64);
    axes->add_dims(1);
    axes->add_int64_data(0);
    add(body, "Unsqueeze", {"i", "zero_axis"}, {"start"});
    add(body, "Unsqueeze", {"i1", "zero_axis"}, {"end"});
    add(body, "Slice", {"x", "start", "end"}, {"x_i"});
    term = "x_i";
  }
  add(body, "Mul", {term, "scale"}, {"step"});
  add(body, "Add", {"y_in", "step"}, {"y_out"});
  add(body, "Identity", {"keep_going"}, {"keep_out"});
  add(body, "Identity", {"y_out"}, {"scanned"});
  for (const char* o : {"keep_out", "y_out", "scanned"}) body->add_output()->set_name(o);
  b.output("y");
  b.output("ys");
  return b;
}

TEST(ControlFlowOps, LoopWithAKnownTripCount) {
  ModelBuilder b = loop_model(false);
  graph::Graph g = b.import();
  EXPECT_TRUE(has_op(g, "Scan"));
  // y0 = [0, 1], x = [1, 2]: + x, + 2x, + 3x.
  expect_both(g, {f32({1, 2}, {2}), f32({0, 1}, {2})}, {{6, 13}, {1, 3, 3, 7, 6, 13}});
}

TEST(ControlFlowOps, ALoopWhoseShapesFollowTheIterationIsUnrolled) {
  ModelBuilder b = loop_model(true);
  graph::Graph g = b.import();
  EXPECT_FALSE(has_op(g, "Scan"));
  // x = [1, 2, 3], y0 = [0]: + 1 * 1, + 2 * 2, + 3 * 3.
  expect_both(g, {f32({1, 2, 3}, {3}), f32({0}, {1})}, {{14}, {1, 5, 14}});
}

TEST(ControlFlowOps, BranchesOfDifferentShapesAreRefusedAtRunTime) {
  ModelBuilder b = if_model(false, false);
  onnx::GraphProto* else_branch = b.g->mutable_node(0)->mutable_attribute(1)->mutable_g();
  add(else_branch, "Concat", {"times", "times"}, {"both"})->add_attribute()->CopyFrom([] {
    onnx::AttributeProto a;
    a.set_name("axis");
    a.set_type(onnx::AttributeProto::INT);
    a.set_i(0);
    return a;
  }());
  else_branch->mutable_output(0)->set_name("both");
  else_branch->mutable_output(0)->clear_type();
  expect_import_error(b, "output 0 is f32[3] in the then branch and f32[6] in the else branch");
}

// Scan-8: batch axis 0, scan axis 1. Running sums of x [2, 3, 2] scanned
// backwards per batch entry from that entry's state; sequence_lens may only
// say the whole scan axis.
ModelBuilder scan8(const std::string& sequence_lens, int64_t batch = 2) {
  ModelBuilder b(8);
  b.input("x", {batch, 3, 2});
  b.input("s0", {batch, 2});
  onnx::NodeProto* n = b.node("Scan", {sequence_lens, "s0", "x"}, {"s", "ys"}, "scan");
  ModelBuilder::set_int(n, "num_scan_inputs", 1);
  ModelBuilder::set_ints(n, "directions", {1});
  add_running_sum_body(n);
  b.output("s");
  b.output("ys");
  return b;
}

TEST(ControlFlowOps, Scan8ScansEachBatchEntry) {
  Tensor x(DType::kF32, {2, 3, 2}), s0(DType::kF32, {2, 2});
  for (int64_t e = 0; e < 12; ++e) x.set_f64(e, double((e / 6) * 10 + e % 6));
  for (int64_t e = 0; e < 4; ++e) s0.set_f64(e, e < 2 ? 0 : 100);
  ModelBuilder b = scan8("");
  graph::Graph g = b.import();
  EXPECT_TRUE(has_op(g, "Scan"));
  // Entry 0: rows [0 1] [2 3] [4 5] from the last; entry 1: [10 11] [12 13] [14 15] from 100.
  expect_both(g, {x, s0}, {{6, 9, 136, 139}, {4, 5, 6, 8, 6, 9, 114, 115, 126, 128, 136, 139}});
  ModelBuilder whole = scan8("lens");
  whole.typed_initializer("lens", onnx::TensorProto::INT32, {2}, {3, 3});
  graph::Graph g2 = whole.import();
  expect_both(g2, {x, s0}, {{6, 9, 136, 139}, {4, 5, 6, 8, 6, 9, 114, 115, 126, 128, 136, 139}});
  ModelBuilder shorter = scan8("lens");
  shorter.typed_initializer("lens", onnx::TensorProto::INT32, {2}, {3, 2});
  expect_import_error(shorter, "'scan' (Scan): sequence_lens[1] is 2, shorter than the scan axis (3)");
  ModelBuilder at_run_time = scan8("lens");
  at_run_time.input("lens", {2}, onnx::TensorProto::INT32);
  expect_import_error(at_run_time, "sequence_lens known only at run time is not supported");
  ModelBuilder large = scan8("", 100000);
  expect_import_error(large, "a batch of 100000 entries, each a scan of its own; at most 64 are supported");
}

TEST(ControlFlowOps, AScanBodyWithTooFewOutputsIsRefused) {
  ModelBuilder b(11);
  b.input("x", {3, 2});
  b.input("s0", {2});
  b.input("t0", {2});
  onnx::NodeProto* n = b.node("Scan", {"s0", "t0", "x"}, {"s", "t"}, "scan");
  ModelBuilder::set_int(n, "num_scan_inputs", 1);
  onnx::GraphProto* body = subgraph(n, "body");
  typed(body->add_input(), "a", {2});
  typed(body->add_input(), "b", {2});
  typed(body->add_input(), "row", {2});
  add(body, "Add", {"a", "row"}, {"next"});
  typed(body->add_output(), "next", {2});  // one value for two states
  b.output("s");
  b.output("t");
  expect_import_error(b, "'scan' (Scan): its body returns 1 values for 2 states and 2 outputs");
}

// M = m + 1 from a graph input m: with m's value given
// (ImportOptions::input_values, as the conformance runner gives them) the
// trip count is worked out while importing and the loop compiles for it.
TEST(ControlFlowOps, ATripCountComputedFromAKnownInputSpecialisesTheLoop) {
  ModelBuilder b = loop_model(false);
  b.input("m", {}, onnx::TensorProto::INT64);
  b.int64_initializer("one", {}, {1});
  b.node("Add", {"m", "one"}, {"m_plus_one"}, "plus_one");
  auto* nodes = b.g->mutable_node();
  for (int i = nodes->size() - 1; i > 0; --i) nodes->SwapElements(i, i - 1);  // before the Loop
  b.g->mutable_node(1)->mutable_input(0)->assign("m_plus_one");
  // Without it the trip count is a run's to decide: a while loop, which
  // cannot bound what it stacks.
  expect_import_error(
      b, "'loop' (Loop): stacks scan output 0 in a loop whose number of iterations nothing bounds");
  onnx_frontend::ImportOptions options;
  Tensor x = f32({1, 2}, {2}), y0 = f32({0, 1}, {2}), m = Tensor::from_i64({2}, {});
  options.input_values = {x, y0, m};
  graph::Graph g = b.import(options);
  passes::eliminate_dead_code(g);  // m + 1, now read by nothing (the pipeline's next stage)
  EXPECT_TRUE(has_op(g, "Scan"));
  // Three iterations, as with a constant M of 3.
  expect_both(g, {x, y0, m}, {{6, 13}, {1, 3, 3, 7, 6, 13}});
}

TEST(ControlFlowOps, RefusalsNameTheNode) {
  ModelBuilder b = loop_model(false);
  b.g->mutable_node(0)->mutable_input(0)->assign("m");
  b.input("m", {}, onnx::TensorProto::INT64);
  expect_import_error(
      b, "'loop' (Loop): stacks scan output 0 in a loop whose number of iterations nothing bounds");
}

// A Range over graph inputs imports (the reference runs it), but its length
// is a value known only at run time: compiling says so, not "bind shapes".
TEST(ControlFlowOps, ARangeOverRunTimeValuesIsRefusedWithTheReason) {
  ModelBuilder b(11);
  for (const char* name : {"start", "limit", "delta"}) b.input(name, {});
  b.node("Range", {"start", "limit", "delta"}, {"r"}, "range");
  b.output("r");
  graph::Graph g = b.import();
  try {
    driver::compile_graph(g, {});
    ADD_FAILURE() << "compiled";
  } catch (const UserError& e) {
    EXPECT_NE(
        std::string(e.what()).find("'range' (Range): its output 'r' is f32[?]: its shape depends on the "
                                   "values of its inputs"),
        std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace tessel::onnx_test
