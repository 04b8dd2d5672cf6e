// The read and write regions of a block, detected from its body: each access
// is a point region at its indices (in the block's iteration variables); a
// dimension indexed through a load (gather) or otherwise data-dependently
// covers the whole dimension. Lowering and the cache primitives call this to
// keep BlockNode::reads/writes true to the body.
#pragma once

#include <vector>

#include "ir/tensor/stmt.h"

namespace tessel::tir {

struct AccessRegions {
  std::vector<BufferRegion> reads, writes;
};

// Accesses of `init` and `body`; a buffer read in several places is listed
// once per distinct index tuple. Buffers in `exclude` (the block's own
// allocations) are left out. A buffer the block writes is also listed in
// reads only where the body loads it (reductions read their output).
AccessRegions detect_access_regions(const Stmt& init, const Stmt& body,
                                    const std::vector<Buffer>& exclude = {});

// The block with reads and writes recomputed from its body.
Block with_detected_regions(const BlockNode& block);

}  // namespace tessel::tir
