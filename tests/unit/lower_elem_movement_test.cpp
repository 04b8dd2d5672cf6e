// Compute definitions of the movement and shape ops, checked exactly against
// the reference executor by interpreting the lowered function: negative axes
// and steps, every Pad mode, negative gather indices, scatters with repeated
// indices, and dtypes other than f32 (the maps move elements unchanged).
#include "ir/tensor/printer.h"
#include "tests/unit/lower_elem_test_util.h"

namespace tessel::lower_elem_test {
namespace {

using Ints = std::vector<int64_t>;

Tensor iota(DType dtype, const Dims& shape) {
  Tensor t(dtype, shape);
  for (int64_t i = 0; i < t.numel(); ++i) t.set_i64(i, i);
  return t;
}

TEST(LowerElemMovement, TransposeConcatSplit) {
  Tensor x = random_tensor(DType::kF32, {2, 3, 4});
  check_op("Transpose", {in(x)}, attrs_of({{"perm", Ints{2, 0, 1}}}));
  check_op("Transpose", {in(x)});
  check_op("Transpose", {in(iota(DType::kI8, {3, 2}))});
  Tensor a = iota(DType::kI64, {2, 3}), b = random_tensor(DType::kI64, {2, 1}, -9, 9), e(DType::kI64, {2, 0});
  check_op("Concat", {in(a), in(b), in(e), in(a)}, attrs_of({{"axis", int64_t(-1)}}));
  check_op("Concat", {in(a), in(a)}, attrs_of({{"axis", int64_t(0)}}));
  check_op("Concat", {in(random_tensor(DType::kBool, {3}))}, attrs_of({{"axis", int64_t(0)}}));
  Tensor s = iota(DType::kF32, {5, 4});
  check_op("Split", {in(s)}, attrs_of({{"axis", int64_t(0)}, {"num_outputs", int64_t(2)}}), 0, 2);
  check_op("Split", {in(s), constant(ints({1, 0, 4}))}, attrs_of({{"axis", int64_t(-2)}}), 0, 3);
  check_op("Split", {in(s)}, attrs_of({{"axis", int64_t(1)}}), 0, 2);
}

// A Concat written into a buffer (here the output, through a ReLU and a
// BatchNormalization) is one block per input, each simplified on its range
// of channels: it reads its own input, with no select among the others.
TEST(LowerElemMovement, AMaterialisedConcatIsABlockPerInput) {
  graph::Graph g;
  std::vector<Tensor> inputs;
  std::vector<graph::Value*> parts;
  for (int64_t c : {3, 2, 4}) {
    inputs.push_back(random_tensor(DType::kF32, {1, c, 2, 5}));
    parts.push_back(g.add_input("x" + std::to_string(c), graph::TensorType(DType::kF32, {1, c, 2, 5})));
  }
  graph::Node* cat = g.add_node("Concat", "cat", parts, {"c"}, attrs_of({{"axis", int64_t(1)}}));
  graph::infer_node(*cat);
  std::vector<graph::Value*> bn_in = {cat->outputs[0]};
  for (const char* name : {"scale", "bias", "mean", "var"})
    bn_in.push_back(g.add_constant(name, random_tensor(DType::kF32, {9}, 0.5, 1.5)));
  graph::Node* bn = g.add_node("BatchNormalization", "bn", bn_in, {"b"}, attrs_of({{"epsilon", 1e-5}}));
  graph::infer_node(*bn);
  graph::Node* relu = g.add_node("Relu", "relu", {bn->outputs[0]}, {"y"});
  graph::infer_node(*relu);
  g.set_outputs(relu->outputs);
  check_graph(g, inputs, 1e-6, "Concat, BatchNormalization, Relu");
  std::string text = tir::to_string(lower_graph(g, inputs).func);
  EXPECT_EQ(text.find("select(v1 <"), std::string::npos) << "no select among the inputs:\n" << text;
  int blocks = 0;
  for (size_t at = text.find("block "); at != std::string::npos; at = text.find("block ", at + 1)) ++blocks;
  EXPECT_EQ(blocks, 3) << text;
}

TEST(LowerElemMovement, SliceWithNegativeStepsAndAxes) {
  Tensor x = iota(DType::kI32, {4, 5, 6});
  check_op("Slice", {in(x), constant(ints({1, 0})), constant(ints({3, 10}))});
  check_op("Slice", {in(x), constant(ints({-1, 4})), constant(ints({-100, 0})), constant(ints({-1, 0})),
                     constant(ints({-2, -1}))});
  check_op("Slice",
           {in(x), constant(ints({5})), constant(ints({1})), constant(ints({1})), constant(ints({1}))});
  check_op("Slice", {in(x), constant(ints({0, 1})), constant(ints({INT64_MAX, -1})), omitted(),
                     constant(ints({3, 2}))});
}

TEST(LowerElemMovement, PadEveryModeWithCropping) {
  Tensor x = iota(DType::kF32, {3, 4});
  Tensor pads = ints({1, 2, 2, 3});
  for (const char* mode : {"constant", "reflect", "edge", "wrap"})
    check_op("Pad", {in(x), constant(pads)}, attrs_of({{"mode", std::string(mode)}}));
  check_op("Pad", {in(x), constant(pads), in(values_of(DType::kF32, {}, {-7.5}))});
  check_op("Pad", {in(x), constant(ints({-1, 5})), omitted(), constant(ints({-1}))},
           attrs_of({{"mode", std::string("reflect")}}));
  check_op("Pad", {in(x), constant(ints({0, -2, 1, 0}))}, attrs_of({{"mode", std::string("edge")}}));
  check_op("Pad", {in(iota(DType::kI64, {1, 2})), constant(ints({2, 1, 3, 0}))},
           attrs_of({{"mode", std::string("reflect")}}));
  check_op("Pad", {in(x), constant(ints({0, -4, 0, 1}))});  // nothing left: all fill
}

TEST(LowerElemMovement, GatherFamiliesWrapNegativeIndices) {
  Tensor data = iota(DType::kF32, {3, 4, 2});
  check_op("Gather", {in(data), in(values_of(DType::kI64, {2, 2}, {0, -1, 3, -4}))},
           attrs_of({{"axis", int64_t(1)}}));
  check_op("Gather", {in(data), in(values_of(DType::kI32, {}, {-3}))});
  check_op("Gather", {in(data), in(values_of(DType::kI64, {4}, {1, 1, -1, 0}))},
           attrs_of({{"axis", int64_t(-1)}}));
  check_op("GatherElements",
           {in(iota(DType::kI32, {3, 3})), in(values_of(DType::kI64, {2, 3}, {1, 2, 0, -1, 0, 2}))},
           attrs_of({{"axis", int64_t(0)}}));
  check_op("GatherElements", {in(iota(DType::kI32, {3, 3})), in(values_of(DType::kI64, {3, 1}, {2, -2, 0}))},
           attrs_of({{"axis", int64_t(1)}}));
  Tensor nd = iota(DType::kF32, {2, 3, 2});
  check_op("GatherND", {in(nd), in(values_of(DType::kI64, {2, 2}, {0, 1, 1, -1}))});
  check_op("GatherND", {in(nd), in(values_of(DType::kI64, {2, 1}, {2, 0}))},
           attrs_of({{"batch_dims", int64_t(1)}}));
  check_op("GatherND", {in(nd), in(values_of(DType::kI64, {1, 3}, {1, 2, 1}))});
}

TEST(LowerElemMovement, TileDepthSpaceTriluRange) {
  check_op("Tile", {in(iota(DType::kU8, {2, 1, 3})), constant(ints({2, 3, 1}))});
  Tensor x = iota(DType::kF32, {1, 8, 2, 3});
  check_op("DepthToSpace", {in(x)}, attrs_of({{"blocksize", int64_t(2)}}));
  check_op("DepthToSpace", {in(x)}, attrs_of({{"blocksize", int64_t(2)}, {"mode", std::string("CRD")}}));
  check_op("SpaceToDepth", {in(iota(DType::kI32, {2, 2, 4, 6}))}, attrs_of({{"blocksize", int64_t(2)}}));
  Tensor m = iota(DType::kI64, {2, 3, 4});
  for (int64_t k : {-1, 0, 2})
    for (int64_t upper : {0, 1})
      check_op("Trilu", {in(m), in(ints({k}).reshaped({}))}, attrs_of({{"upper", upper}}));
  check_op("Trilu", {in(random_tensor(DType::kBool, {4, 3}))});
  check_op("Range", {constant(values_of(DType::kI32, {}, {10})), constant(values_of(DType::kI32, {}, {-3})),
                     constant(values_of(DType::kI32, {}, {-4}))});
  check_op("Range", {constant(values_of(DType::kF32, {}, {0.5})), constant(values_of(DType::kF32, {}, {3})),
                     constant(values_of(DType::kF32, {}, {0.3}))});
  check_op("Range",
           {constant(values_of(DType::kI64, {}, {1})), constant(values_of(DType::kI64, {}, {7})),
            constant(values_of(DType::kI64, {}, {2}))},
           {}, 0, 1, false);
}

TEST(LowerElemMovement, ScattersApplyUpdatesInIndexOrder) {
  Tensor data = iota(DType::kF32, {3, 4});
  Tensor idx = values_of(DType::kI64, {2, 3}, {1, -1, 0, 1, 2, 0});  // rows 1 and 0 hit twice
  Tensor upd = values_of(DType::kF32, {2, 3}, {10, 20, 30, 40, 50, 60});
  for (const char* red : {"none", "add", "mul", "max", "min"})
    check_op("ScatterElements", {in(data), in(idx), in(upd)},
             attrs_of({{"axis", int64_t(0)}, {"reduction", std::string(red)}}));
  check_op("ScatterElements",
           {in(iota(DType::kI32, {2, 5})), in(values_of(DType::kI64, {2, 2}, {4, 4, -1, 0})),
            in(values_of(DType::kI32, {2, 2}, {7, 8, 9, 10}))},
           attrs_of({{"axis", int64_t(-1)}}));
  Tensor nd_idx = values_of(DType::kI64, {3, 1}, {2, -3, 2});
  Tensor nd_upd = values_of(DType::kF32, {3, 4}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});
  for (const char* red : {"none", "add", "mul"})
    check_op("ScatterND", {in(data), in(nd_idx), in(nd_upd)}, attrs_of({{"reduction", std::string(red)}}));
  check_op("ScatterND", {in(data), in(values_of(DType::kI64, {2, 2}, {0, 3, 2, -1})),
                         in(values_of(DType::kF32, {2}, {-1, -2}))});
  check_op("ScatterND", {in(random_tensor(DType::kBool, {2, 2})), in(values_of(DType::kI64, {1, 2}, {1, 0})),
                         in(values_of(DType::kBool, {1}, {1}))});
}

TEST(LowerElemShape, ReshapeFamilyAndExpand) {
  Tensor x = iota(DType::kF32, {2, 3, 4});
  for (const Ints& shape :
       {Ints{4, 0, -1}, Ints{24}, Ints{2, 12}, Ints{1, 6, 1, 4}, Ints{3, 8}, Ints{-1, 1, 2}})
    check_op("Reshape", {in(x), constant(ints(shape))});
  for (int64_t axis : {0, 1, 2, 3, -1}) check_op("Flatten", {in(x)}, attrs_of({{"axis", axis}}));
  Tensor u = iota(DType::kI8, {1, 3, 1, 2});
  check_op("Squeeze", {in(u)});
  check_op("Squeeze", {in(u), constant(ints({-2}))});
  check_op("Unsqueeze", {in(u), constant(ints({-1, 0, 3}))});
  check_op("Reshape", {in(iota(DType::kF32, {2, 0, 3})), constant(ints({0, 3, -1}))});
  check_op("Expand", {in(iota(DType::kI32, {3, 1})), constant(ints({2, 1, 4}))});
  check_op("Expand", {in(iota(DType::kBool, {1})), constant(ints({3}))});
}

TEST(LowerElemShape, KnownValuesAndFills) {
  Tensor x(DType::kF32, {2, 3, 5});
  check_op("Shape", {in(x)});
  check_op("Shape", {in(x)}, attrs_of({{"start", int64_t(-2)}, {"end", int64_t(-1)}}));
  check_op("Shape", {in(x)}, attrs_of({{"start", int64_t(2)}, {"end", int64_t(1)}}));
  check_op("Size", {in(x)});
  check_op("ConstantOfShape", {constant(ints({2, 3}))});
  check_op("ConstantOfShape", {constant(ints({4}))}, attrs_of({{"value", ints({7}).reshaped({1})}}));
  check_op("ConstantOfShape", {constant(ints({0}))});
  Tensor h(DType::kF16, {1});
  h.set_f64(0, 1.5);
  check_op("ConstantOfShape", {constant(ints({3, 1}))}, attrs_of({{"value", h}}));
}

}  // namespace
}  // namespace tessel::lower_elem_test
