// Shape-function pieces the elementwise op schemas share (elementwise.cpp and
// elementwise_special.cpp): dtype classes, same-shape and broadcasting outputs.
#pragma once

#include <vector>

#include "ir/graph/op_registry.h"

namespace tessel::graph::ops {

// The element types an op accepts on an input.
enum class TypeClass {
  kFloat,          // f32, f64, f16, bf16
  kSignedNumeric,  // floats and i8, i32, i64
  kNumeric,        // every dtype but bool
  kBool,           // bool only
  kInteger,        // the integers (not bool)
  kUnsigned,       // u8, u16, u32, u64
  kAny,            // every dtype
};

bool in_type_class(DType t, TypeClass c);
// A UserError naming the node when input i's dtype is outside c.
void check_type_class(const InferContext& ctx, size_t i, TypeClass c);

// Output 0 (and every other output) gets input 0's shape with dtype `dtype`.
void set_same_shape_outputs(InferContext& ctx, DType dtype);
// Output 0 gets the numpy broadcast of the listed (present) inputs' shapes;
// an input of unknown rank makes the output rank unknown.
void set_broadcast_output(InferContext& ctx, const std::vector<size_t>& inputs, DType dtype);

// One FLOP per output element (elementwise arithmetic, comparisons).
int64_t one_flop_per_element(const Node& node);

// Where, Clip, Cast, Identity, Dropout (elementwise_special.cpp).
void register_elementwise_special_ops(OpRegistry& r);

}  // namespace tessel::graph::ops
