// What a float expression of the tensor IR can take, from the shapes a
// clamp and a NaN guard have in it: the lowering of Clip and of a
// QuantizeLinear's saturation, and of a float-to-integer Cast.
//
// The lowering converts a float it knows to be in int32's range through
// int32; code generation, which cannot convert to int64 in vector lanes on
// every machine (AVX2 has no such instruction), converts such a value to
// int32 directly. Both ask these bounds.
#pragma once

#include "ir/tensor/expr.h"

namespace tessel::tir {

struct FloatBounds {
  double lo, hi;  // every non-NaN value lies in [lo, hi]
  bool may_be_nan = true;
};

// Constants; a widening float cast; min and max, as nodes or as the selects
// of std_min and std_max (select(a < b, a, b), select(a < b, b, a)); and a
// NaN guard, select(v == v, v, other). Anything else is unbounded and may be
// NaN.
FloatBounds float_bounds(const Expr& e);

// Whether e, a float, is never NaN and always in [lo, hi).
bool float_within(const Expr& e, double lo, double hi);

}  // namespace tessel::tir
