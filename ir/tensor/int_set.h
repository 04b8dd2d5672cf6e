// Integer sets for region analysis: per dimension, an interval [min, min +
// extent) of expressions, with an optional constant stride. compute_at and
// cache_read ask "which elements of B does this consumer read below loop L?"
// by relaxing the loop variables below L over their ranges. Where a set
// cannot be bounded exactly it is over-approximated (covers more), never
// under-approximated.
#pragma once

#include <unordered_map>
#include <vector>

#include "ir/tensor/simplify.h"

namespace tessel::tir {

// The set is contained in {min + k * stride : k >= 0} intersected with
// [min, min + extent - 1]: `extent` is the span from min to max, which is the
// number of points when stride is 1. A set that could not be bounded (an
// index read from memory, say) has bounded == false and undefined min and
// extent: it stands for every integer, and callers use the whole dimension.
struct IntSet {
  Expr min;     // inclusive
  Expr extent;  // number of points covered, when stride is 1
  int64_t stride = 1;
  bool bounded = true;

  static IntSet point(Expr e);
  static IntSet interval(Expr min, Expr extent);
  static IntSet everything();  // bounded == false
  Expr max() const;            // inclusive: min + (extent - 1)
};

// Ranges of the variables being relaxed (e.g. the loops below a point).
using RelaxMap = std::unordered_map<const VarNode*, Range>;

// The set e takes when each variable of `relax` runs over its range; other
// variables stay symbolic. `analyzer` knows the bounds of the other variables.
// Exact hull for affine expressions of independent variables, with a stride
// when the relaxed variables' coefficients share a factor:
//   i*16 + j, relaxing j over [0, 16)  ->  [i*16, i*16 + 15]
//   j*4 + 1, relaxing j over [0, 8)   ->  [1, 29] stride 4
// floordiv/floormod by positive constants, min, max and select (the union of
// both arms) are bounded through their operands; anything else falls back to
// constant bounds, and to everything() when it has none. Symbolic rewrites
// need the other variables bound in `analyzer` (see Analyzer on wrap-around).
IntSet eval_set(const Expr& e, const RelaxMap& relax, const Analyzer& analyzer);
// Per-dimension union of the region relaxed over `relax`.
std::vector<IntSet> eval_region(const std::vector<Range>& region, const RelaxMap& relax,
                                const Analyzer& analyzer);
// The smallest set covering both (over-approximated); everything() if either is.
IntSet union_set(const IntSet& a, const IntSet& b, const Analyzer& analyzer);
// Ranges covering the union of several regions of one buffer. Every
// dimension must be bounded (an internal error otherwise); the overload with
// the buffer's shape covers an unbounded dimension by the whole of it.
std::vector<Range> union_regions(const std::vector<std::vector<IntSet>>& regions, const Analyzer& analyzer);
std::vector<Range> union_regions(const std::vector<std::vector<IntSet>>& regions,
                                 const std::vector<int64_t>& shape, const Analyzer& analyzer);
// True when `inner` is provably inside `outer` (false when unsure).
bool covers(const std::vector<Range>& outer, const std::vector<Range>& inner, const Analyzer& analyzer);

}  // namespace tessel::tir
