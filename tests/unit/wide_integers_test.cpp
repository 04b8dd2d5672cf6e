// The 16-bit and unsigned 32/64-bit integers, and the bitwise ops and shifts,
// through the three executors: the reference kernels, the tensor IR
// interpreter and the LLVM code. The tensor IR holds every integer in an
// int64, so u64 values at and above 2^63 are the test: they must compare,
// divide, reduce, shift and convert as unsigned, not as the negative int64 of
// their bits; the narrow types wrap at their own width.
#include <cstdint>
#include <limits>

#include "src/driver/compile_model.h"
#include "tests/unit/lower_nn_test_util.h"

namespace tessel::lower_nn_test {
namespace {

using std::vector;

constexpr uint64_t kTop = uint64_t(1) << 63;  // 2^63: negative if read as int64

template <typename T>
Tensor tensor_of(DType dtype, Dims shape, const vector<T>& values) {
  Tensor t(dtype, std::move(shape));
  for (int64_t i = 0; i < t.numel(); ++i) t.data<T>()[i] = values[size_t(i)];
  return t;
}

// Integers by their bits, floats by value.
void expect_same(const Tensor& got, const Tensor& want, const std::string& what) {
  ASSERT_EQ(got.dtype(), want.dtype()) << what;
  ASSERT_EQ(got.shape(), want.shape()) << what;
  for (int64_t i = 0; i < want.numel(); ++i) {
    if (is_float(want.dtype()))
      EXPECT_EQ(got.get_f64(i), want.get_f64(i)) << what << ": element " << i;
    else
      EXPECT_EQ(uint64_t(got.get_i64(i)), uint64_t(want.get_i64(i))) << what << ": element " << i;
  }
}

void expect_everywhere(const std::string& op, const vector<Arg>& args, graph::Attrs attributes,
                       const Tensor& want) {
  LoweredNode n(op, "n", args, std::move(attributes), 1);
  vector<Tensor> inputs;
  for (const Arg& a : args)
    if (!a.constant && !a.omitted) inputs.push_back(a.value);
  n.g.set_outputs({n.node->outputs[0]});
  driver::JitModel jit(driver::compile_graph(n.g, {}));
  expect_same(n.reference()[0], want, op + " (reference)");
  expect_same(n.interpreted()[0], want, op + " (tensor IR interpreter)\n" + n.text());
  expect_same(jit.run(inputs)[0], want, op + " (LLVM)");
}

Tensor u64(Dims shape, const vector<uint64_t>& v) {
  return tensor_of(DType::kU64, std::move(shape), v);
}

TEST(WideIntegers, U64ComparesAndOrdersUnsigned) {
  Tensor a = u64({4}, {kTop, 1, kTop + 5, ~uint64_t(0)});
  Tensor b = u64({4}, {1, kTop, kTop + 4, 7});
  expect_everywhere("Greater", {value_arg(a), value_arg(b)}, {},
                    tensor_of<bool>(DType::kBool, {4}, {1, 0, 1, 1}));
  expect_everywhere("Max", {value_arg(a), value_arg(b)}, {}, u64({4}, {kTop, kTop, kTop + 5, ~uint64_t(0)}));
  expect_everywhere("Min", {value_arg(a), value_arg(b)}, {}, u64({4}, {1, 1, kTop + 4, 7}));
}

TEST(WideIntegers, U64DividesUnsigned) {
  Tensor a = u64({3}, {~uint64_t(0), kTop + 6, 10});
  Tensor b = u64({3}, {2, 4, 3});
  expect_everywhere("Div", {value_arg(a), value_arg(b)}, {}, u64({3}, {~uint64_t(0) / 2, (kTop + 6) / 4, 3}));
  expect_everywhere("Mod", {value_arg(a), value_arg(b)}, {}, u64({3}, {1, 2, 1}));
}

TEST(WideIntegers, U64ReductionsStartFromTheUnsignedExtremes) {
  Tensor x = u64({2, 3}, {5, kTop, 7, ~uint64_t(0) - 1, 3, kTop + 1});
  graph::Attrs drop = attrs(kv("keepdims", int64_t(0)));
  Tensor axis = Tensor::from_i64({1});
  expect_everywhere("ReduceMax", {value_arg(x), const_arg(axis)}, drop, u64({2}, {kTop, ~uint64_t(0) - 1}));
  expect_everywhere("ReduceMin", {value_arg(x), const_arg(axis)}, drop, u64({2}, {5, 3}));
}

TEST(WideIntegers, U64ConvertsToFloatAsUnsigned) {
  Tensor x = u64({3}, {kTop, 3, kTop + (uint64_t(1) << 62)});
  expect_everywhere(
      "Cast", {value_arg(x)}, attrs(kv("to", std::string("f64"))),
      tensor_of<double>(DType::kF64, {3}, {9223372036854775808.0, 3.0, 13835058055282163712.0}));
}

TEST(WideIntegers, NarrowTypesWrapAtTheirWidth) {
  Tensor a = tensor_of<int16_t>(DType::kI16, {3}, {32767, -32768, -5});
  Tensor b = tensor_of<int16_t>(DType::kI16, {3}, {1, -1, 3});
  expect_everywhere("Add", {value_arg(a), value_arg(b)}, {},
                    tensor_of<int16_t>(DType::kI16, {3}, {-32768, 32767, -2}));
  Tensor c = tensor_of<uint16_t>(DType::kU16, {2}, {65535, 2});
  Tensor d = tensor_of<uint16_t>(DType::kU16, {2}, {2, 3});
  expect_everywhere("Mul", {value_arg(c), value_arg(d)}, {},
                    tensor_of<uint16_t>(DType::kU16, {2}, {65534, 6}));
  expect_everywhere("Less", {value_arg(c), value_arg(d)}, {}, tensor_of<bool>(DType::kBool, {2}, {0, 1}));
  Tensor e = tensor_of<uint32_t>(DType::kU32, {2}, {4294967295u, 7});
  Tensor f = tensor_of<uint32_t>(DType::kU32, {2}, {1, 2});
  expect_everywhere("Sub", {value_arg(f), value_arg(e)}, {},
                    tensor_of<uint32_t>(DType::kU32, {2}, {2, 4294967291u}));
  expect_everywhere("Cast", {value_arg(e)}, attrs(kv("to", std::string("i64"))),
                    tensor_of<int64_t>(DType::kI64, {2}, {4294967295, 7}));
}

TEST(WideIntegers, BitwiseOpsAndShiftsAtTheEdges) {
  Tensor a = u64({3}, {kTop | 5, 6, ~uint64_t(0)});
  Tensor b = u64({3}, {kTop | 3, 3, 1});
  expect_everywhere("BitwiseAnd", {value_arg(a), value_arg(b)}, {}, u64({3}, {kTop | 1, 2, 1}));
  expect_everywhere("BitwiseXor", {value_arg(a), value_arg(b)}, {}, u64({3}, {6, 5, ~uint64_t(0) - 1}));
  expect_everywhere("BitwiseNot", {value_arg(tensor_of<int16_t>(DType::kI16, {2}, {0, -32768}))}, {},
                    tensor_of<int16_t>(DType::kI16, {2}, {-1, 32767}));
  // Shifting by the type's width or more gives 0; u64 shifts right logically.
  Tensor x8 = tensor_of<uint8_t>(DType::kU8, {4}, {1, 255, 128, 3});
  Tensor by8 = tensor_of<uint8_t>(DType::kU8, {4}, {7, 8, 200, 1});
  expect_everywhere("BitShift", {value_arg(x8), value_arg(by8)}, attrs(kv("direction", std::string("LEFT"))),
                    tensor_of<uint8_t>(DType::kU8, {4}, {128, 0, 0, 6}));
  expect_everywhere("BitShift", {value_arg(u64({3}, {kTop, kTop, 9})), value_arg(u64({3}, {63, 64, 1}))},
                    attrs(kv("direction", std::string("RIGHT"))), u64({3}, {1, 0, 4}));
}

}  // namespace
}  // namespace tessel::lower_nn_test
