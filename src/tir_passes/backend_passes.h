// The tensor-IR passes between a schedule and a backend, in the order the
// compiler runs them: blocks become plain loops, buffers shrink to what is
// accessed, then vector loops split where their guards change (after
// compaction, which rewrites the guards' indices). The pipeline runs them as
// timed stages; the tuner runs them on each candidate, so that what it
// measures is what the compiler builds.
#pragma once

#include <vector>

#include "ir/tensor/function.h"

namespace tessel::tir_passes {

struct TirPass {
  const char* name;
  tir::PrimFunc (*run)(const tir::PrimFunc&);
};

const std::vector<TirPass>& passes_before_backend();
// For a GPU target: the same, then the thread-block barriers where shared
// memory is exchanged (insert_barriers.h).
const std::vector<TirPass>& passes_before_gpu_backend();

// All of passes_before_backend() (gpu: passes_before_gpu_backend()), then
// the verifier for that kind of target (which throws on an invalid function).
tir::PrimFunc prepare_for_backend(const tir::PrimFunc& scheduled, bool gpu = false);

}  // namespace tessel::tir_passes
