// Arithmetic simplification with range analysis: constant folding, affine
// canonical form (sum of variable terms times constants plus a constant),
// floordiv/floormod simplification under known bounds, min/max and
// comparisons decided by bounds, removal of provably true conditions.
#pragma once

#include <cstdint>
#include <optional>
#include <unordered_map>
#include <vector>

#include "ir/tensor/function.h"
#include "ir/tensor/functor.h"

namespace tessel::tir {

// An inclusive integer interval; a missing bound is unbounded.
struct ConstBound {
  std::optional<int64_t> min, max;
  bool is_const() const { return min && max && *min == *max; }
};

// What is known about each variable: the range it takes. Variables not bound
// range over their dtype (i64: unbounded). Integer arithmetic wraps like the
// interpreter's, and every bound and decision accounts for that: a result that
// might overflow is unbounded, so rewrites that need exact values (floordiv,
// floormod, min/max, comparisons) fire only on bounded variables.
class Analyzer {
 public:
  // v takes every value of [min, min + extent); an empty range binds [min, min].
  void bind(const Var& v, int64_t min, int64_t extent);
  void bind(const Var& v, const Range& range);  // bounds of range's expressions
  ConstBound bound(const Expr& e) const;
  Expr simplify(const Expr& e) const;
  bool can_prove(const Expr& cond) const;  // true only when cond holds for every binding

  using VarBounds = std::unordered_map<const VarNode*, ConstBound>;
  const VarBounds& var_bounds() const { return bounds_; }

 private:
  VarBounds bounds_;
  std::vector<Var> bound_vars_;  // keeps each bound variable alive, so its address stays its own
};

//   (i0*16 + i1) // 16  ->  i0        (with i1 bound to [0, 16))
//   (i*16 + j) - i*16   ->  j
//   min(i, 20)          ->  i          (with i bound to [0, 16))
Expr simplify(const Expr& e);
// Simplifies every expression, binding loop variables to [min, min + extent)
// and block iteration variables to their domains on the way down; removes
// ifs whose condition is provably true or false, loops that never run, and
// loops of extent 1 (their variable becomes the min) unless thread-bound or
// annotated. A branch or loop left with nothing to do becomes an empty Seq.
//   for i in 0..1: for j in 0..8: if j < 8: A[i*8 + j] = 0   ->   for j in 0..8: A[j] = 0
Stmt simplify(const Stmt& s);
PrimFunc simplify(const PrimFunc& f);

// The element offset of buffer[indices] (through the buffer's strides) with
// the variables of `at` substituted, when every index then simplifies to a
// constant; nothing otherwise (an index that reads data, a free variable).
//   A: f32[4, 8], indices (i, j // 2), at {i: 1, j: 5}  ->  10
std::optional<int64_t> constant_offset(const Buffer& buffer, const std::vector<Expr>& indices, const VarMap& at);

}  // namespace tessel::tir
