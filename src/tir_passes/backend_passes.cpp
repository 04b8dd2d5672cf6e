#include "src/tir_passes/backend_passes.h"

#include "ir/tensor/verifier.h"
#include "src/tir_passes/compact_buffers.h"
#include "src/tir_passes/flatten_blocks.h"
#include "src/tir_passes/insert_barriers.h"
#include "src/tir_passes/partition_loops.h"

namespace tessel::tir_passes {

const std::vector<TirPass>& passes_before_backend() {
  static const std::vector<TirPass> passes = {
      {"flatten_blocks", flatten_blocks},
      {"compact_buffers", compact_buffers},
      {"partition_vector_loops", [](const tir::PrimFunc& f) { return partition_vector_loops(f); }},
  };
  return passes;
}

const std::vector<TirPass>& passes_before_gpu_backend() {
  static const std::vector<TirPass> passes = [] {
    std::vector<TirPass> p = passes_before_backend();
    p.push_back({"insert_barriers", insert_barriers});
    return p;
  }();
  return passes;
}

tir::PrimFunc prepare_for_backend(const tir::PrimFunc& scheduled, bool gpu) {
  tir::PrimFunc f = scheduled;
  for (const TirPass& pass : gpu ? passes_before_gpu_backend() : passes_before_backend()) f = pass.run(f);
  tir::verify(f, {.allow_thread_bindings = gpu, .allow_parallel = !gpu});
  return f;
}

}  // namespace tessel::tir_passes
