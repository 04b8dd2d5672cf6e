// Graph IR tests: the printer against golden text that reads like the IR, the
// verifier's must-fail cases (each with its message), and graph rewiring.
#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "ir/graph/graph.h"
#include "ir/graph/op_registry.h"
#include "ir/graph/printer.h"
#include "ir/graph/verifier.h"

namespace tessel::graph {
namespace {

// y = MatMul(x, w); z = LeakyRelu(y), types inferred by the registry.
struct MatMulAct {
  Graph g;
  Value *x, *w, *y, *z;
  Node *mm, *act;

  MatMulAct() {
    g.name = "g";
    x = g.add_input("x", TensorType(DType::kF32, {1, 4}));
    w = g.add_constant("w", Tensor(DType::kF32, {4, 4}));
    mm = g.add_node("MatMul", "mm", {x, w}, {"y"});
    infer_node(*mm);
    y = mm->outputs[0];
    Attrs a;
    a.set("alpha", 0.1);
    act = g.add_node("LeakyRelu", "act", {y}, {"z"}, a);
    infer_node(*act);
    z = act->outputs[0];
    g.set_outputs({z});
  }
};

// b = Relu(Relu(x)), the smallest chain to break.
struct ReluChain {
  Graph g;
  Value *x, *a, *b;
  Node *r1, *r2;

  ReluChain() {
    x = g.add_input("x", TensorType(DType::kF32, {2, 3}));
    r1 = g.add_node("Relu", "r1", {x}, {"a"});
    infer_node(*r1);
    a = r1->outputs[0];
    r2 = g.add_node("Relu", "r2", {a}, {"b"});
    infer_node(*r2);
    b = r2->outputs[0];
    g.set_outputs({b});
  }
};

// The InternalError message that verify_graph throws; fails the test if none.
std::string verify_error(const Graph& g) {
  try {
    verify_graph(g);
  } catch (const InternalError& e) {
    return e.what();
  }
  ADD_FAILURE() << "the verifier accepted:\n" << print_graph(g);
  return "";
}

void expect_verify_error(const Graph& g, const std::string& part) {
  std::string message = verify_error(g);
  EXPECT_EQ(message.rfind("internal error, please report: ", 0), 0u) << message;
  EXPECT_NE(message.find(part), std::string::npos) << "'" << part << "' is not in: " << message;
}

TEST(GraphPrinter, InferredGraph) {
  MatMulAct m;
  EXPECT_EQ(print_graph(m.g),
            "graph g(%x: f32[1, 4]) {\n"
            "  const %w: f32[4, 4]\n"
            "  %y: f32[1, 4] = MatMul(%x, %w)  # node 'mm'\n"
            "  %z: f32[1, 4] = LeakyRelu(%y) {alpha = 0.1}  # node 'act'\n"
            "  return %z\n"
            "}\n");
}

// Symbolic, unknown and unknown-rank shapes; an omitted input; two outputs;
// attributes of several kinds, in name order; a graph without a name.
TEST(GraphPrinter, EveryFormOfTypeInputAndAttribute) {
  Graph g;
  TensorType xt = TensorType::of_rank(DType::kF32, 2);
  xt.dims[0] = Dim::unknown("N");
  xt.dims[1] = Dim::known(3);
  Value* x = g.add_input("x", xt);
  Value* u = g.add_input("u", TensorType::unknown_rank(DType::kI64));
  Value* hi = g.add_constant("hi", Tensor::scalar_f64(DType::kF32, 6));
  Node* clip = g.add_node("Clip", "clip", {x, nullptr, hi}, {"c"});
  clip->outputs[0]->type = TensorType::of_rank(DType::kF32, 2);
  Attrs a;
  a.set("split", std::vector<int64_t>{1, 2});
  a.set("axis", int64_t(1));
  a.set("mode", std::string("edge"));
  a.set("scales", std::vector<double>{0.5, 2});
  Node* split = g.add_node("Split", "split", {clip->outputs[0]}, {"p", "q"}, a);
  split->outputs[0]->type = TensorType::of_rank(DType::kF32, 2);
  split->outputs[1]->type = TensorType::unknown_rank(DType::kF32);
  g.set_outputs({split->outputs[0], split->outputs[1], u});
  EXPECT_EQ(print_graph(g),
            "graph main(%x: f32[N, 3], %u: i64[*]) {\n"
            "  const %hi: f32[]\n"
            "  %c: f32[?, ?] = Clip(%x, _, %hi)  # node 'clip'\n"
            "  %p: f32[?, ?], %q: f32[*] = Split(%c) {axis = 1, mode = \"edge\", scales = [0.5, 2], "
            "split = [1, 2]}  # node 'split'\n"
            "  return %p, %q, %u\n"
            "}\n");
}

TEST(GraphVerifier, AcceptsWellFormedGraphs) {
  MatMulAct m;
  EXPECT_NO_THROW(verify_graph(m.g));
  ReluChain r;
  EXPECT_NO_THROW(verify_graph(r.g));
}

TEST(GraphVerifier, UseBeforeDefinition) {
  ReluChain r;
  r.r1->inputs[0] = r.b;  // r1 now reads what r2, after it, defines: a cycle
  expect_verify_error(r.g, "node 'r1' uses %b before it is defined");
}

TEST(GraphVerifier, UseOfAValueNoNodeDefines) {
  ReluChain r;
  Graph other;
  Value* stray = other.add_input("stray", TensorType(DType::kF32, {2, 3}));
  r.r2->inputs[0] = stray;
  expect_verify_error(r.g, "node 'r2' uses %stray before it is defined");
}

TEST(GraphVerifier, WrongProducer) {
  ReluChain r;
  r.b->producer = r.r1;
  expect_verify_error(r.g, "output %b of node 'r2' has a wrong producer");
  ReluChain s;
  s.b->producer_output = 1;
  expect_verify_error(s.g, "output %b of node 'r2' has a wrong producer");
}

TEST(GraphVerifier, ValueDefinedTwice) {
  ReluChain r;
  r.r1->outputs[0] = r.x;  // r1 claims to define the graph input
  r.x->producer = r.r1;
  expect_verify_error(r.g, "%x is defined twice");
}

TEST(GraphVerifier, OutputTypeDisagreesWithTheOp) {
  ReluChain dtype;
  dtype.a->type = TensorType(DType::kI64, {2, 3});
  expect_verify_error(dtype.g, "node 'r1' output 0 has type i64[2, 3] but its op infers f32[2, 3]");
  ReluChain rank;
  rank.b->type = TensorType(DType::kF32, {6});
  expect_verify_error(rank.g, "node 'r2' output 0 has type f32[6] but its op infers f32[2, 3]");
  ReluChain unknown;
  unknown.b->type = TensorType::unknown_rank(DType::kF32);
  expect_verify_error(unknown.g, "node 'r2' output 0 has type f32[*] but its op infers f32[2, 3]");
}

TEST(GraphVerifier, ConstantDisagreesWithItsType) {
  MatMulAct m;
  m.w->type = TensorType(DType::kF32, {4});
  expect_verify_error(m.g, "constant %w holds f32[4, 4] but is typed f32[4]");
  MatMulAct d;
  d.w->type = TensorType(DType::kF64, {4, 4});
  expect_verify_error(d.g, "constant %w holds f32[4, 4] but is typed f64[4, 4]");
}

TEST(GraphVerifier, GraphOutputNotDefined) {
  ReluChain r;
  Graph other;
  r.g.set_outputs({other.add_input("q", TensorType(DType::kF32, {1}))});
  expect_verify_error(r.g, "graph output %q is not defined");
}

TEST(GraphVerifier, UnregisteredOp) {
  ReluChain r;
  r.r2->op = "FooBar";
  expect_verify_error(r.g, "node 'r2' has unregistered op FooBar");
}

// A value the kernels store in another order prints it after its type.
TEST(GraphPrinter, AStorageOrderFollowsTheType) {
  Graph g;
  Value* x = g.add_input("x", TensorType(DType::kF32, {1, 8, 7, 7}));
  Node* r1 = g.add_node("Relu", "r1", {x}, {"a"});
  infer_node(*r1);
  Node* r2 = g.add_node("Relu", "r2", {r1->outputs[0]}, {"b"});
  infer_node(*r2);
  r1->outputs[0]->storage = {0, 2, 3, 1};
  g.set_outputs({r2->outputs[0]});
  EXPECT_EQ(print_graph(g),
            "graph main(%x: f32[1, 8, 7, 7]) {\n"
            "  %a: f32[1, 8, 7, 7] stored [0, 2, 3, 1] = Relu(%x)  # node 'r1'\n"
            "  %b: f32[1, 8, 7, 7] = Relu(%a)  # node 'r2'\n"
            "  return %b\n"
            "}\n");
  EXPECT_NO_THROW(verify_graph(g));
  EXPECT_EQ(stored_dims(*r1->outputs[0]), (std::vector<int64_t>{1, 7, 7, 8}));
  EXPECT_EQ(stored_dims(*r2->outputs[0]), (std::vector<int64_t>{1, 8, 7, 7}));
}

// A storage order is a permutation, and the model's interface keeps its layout.
TEST(GraphVerifier, AStorageOrderOnTheInterfaceOrNotAPermutation) {
  ReluChain r;
  r.a->storage = {1, 1};
  expect_verify_error(r.g, "%a: its storage order is not a permutation of its dimensions");
  r.a->storage = {1, 0, 2};
  expect_verify_error(r.g, "%a of type f32[2, 3] has a storage order of 3 dimensions");
  r.a->storage = {1, 0};
  EXPECT_NO_THROW(verify_graph(r.g));
  r.b->storage = {1, 0};
  expect_verify_error(r.g, "%b has a storage order but is a graph input, output or constant");
}

TEST(GraphRewiring, ReplaceUsesRemoveNodesAndValues) {
  ReluChain r;
  EXPECT_EQ(users_of(r.g, r.a), std::vector<Node*>{r.r2});
  // Bypass r2: every use of b now reads a; then drop r2 and what it defined.
  r.g.replace_uses(r.b, r.a);
  EXPECT_EQ(r.g.outputs()[0], r.a);
  r.g.remove_nodes_if([&](const Node& n) { return &n == r.r2; });
  r.g.remove_unused_values();
  EXPECT_EQ(r.g.num_nodes(), 1u);
  EXPECT_NO_THROW(verify_graph(r.g));
  EXPECT_EQ(print_graph(r.g),
            "graph main(%x: f32[2, 3]) {\n"
            "  %a: f32[2, 3] = Relu(%x)  # node 'r1'\n"
            "  return %a\n"
            "}\n");
  EXPECT_TRUE(users_of(r.g, r.a).empty());
}

TEST(GraphTypes, PrintedFormsAndEquality) {
  EXPECT_EQ(TensorType(DType::kI8, {}).str(), "i8[]");
  EXPECT_EQ(TensorType::of_rank(DType::kBool, 2).str(), "bool[?, ?]");
  EXPECT_EQ(*TensorType(DType::kF32, {2, 0, 3}).numel(), 0);
  EXPECT_FALSE(TensorType::of_rank(DType::kF32, 1).numel().has_value());
  // Two unknown dimensions are the same only when they share a symbol.
  EXPECT_TRUE(Dim::unknown("N") == Dim::unknown("N"));
  EXPECT_FALSE(Dim::unknown() == Dim::unknown());
  EXPECT_FALSE(Dim::unknown("N") == Dim::known(3));
}

}  // namespace
}  // namespace tessel::graph
