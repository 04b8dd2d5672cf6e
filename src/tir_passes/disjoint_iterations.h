// Whether the iterations of a loop touch disjoint parts of a buffer, given
// the region one iteration touches: the test compact_buffers uses to move an
// allocation into a loop (a copy per iteration must lose nothing another
// iteration reads).
#pragma once

#include <cstdint>
#include <vector>

#include "ir/tensor/simplify.h"
#include "ir/tensor/stmt.h"

namespace tessel::tir_passes {

// One dimension of the region one iteration touches: [min, min + extent),
// min an expression of the loop's variable and the loops around it.
struct IterationRegionDim {
  tir::Expr min;
  int64_t extent;
};

// True when, along some dimension, the region moves by at least its extent
// per iteration of `loop` (min = step * v + terms free of v, |step| >=
// extent); or, for a loop over fused loops that indexes by v // k and v % k,
// when that holds for the quotient (in a dimension free of the remainder)
// and for the remainder. `outer` binds the loops around `loop`.
bool iterations_disjoint(const tir::ForNode& loop, const std::vector<IterationRegionDim>& region,
                         const tir::Analyzer& outer);

}  // namespace tessel::tir_passes
