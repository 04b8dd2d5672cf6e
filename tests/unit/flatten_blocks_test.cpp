// flatten_blocks: scheduled functions without blocks compute what they did
// with them (interpreter), on every workload and on CPU and GPU schedules.
#include "src/tir_passes/flatten_blocks.h"

#include <gtest/gtest.h>

#include "src/tir_passes/insert_barriers.h"
#include "tests/unit/sched_workloads_util.h"

namespace tessel {
namespace {

using namespace sched_workloads;

bool has_blocks(const tir::PrimFunc& f) {
  bool found = false;
  tir::walk(f->body, [&](const tir::Stmt& s) {
    found = found || s->kind == tir::StmtKind::kBlock;
    return !found;
  });
  return found;
}

void expect_flattened_equal(Workload w, const tir::PrimFunc& scheduled, bool gpu) {
  tir::PrimFunc flat = tir_passes::flatten_blocks(gpu ? tir_passes::insert_barriers(scheduled) : scheduled);
  EXPECT_FALSE(has_blocks(flat)) << flat;
  EXPECT_EQ(check_against(reference(w), flat, gpu, kAllOrders), "") << workload_name(w) << "\n" << flat;
}

TEST(FlattenBlocks, EveryWorkloadUnscheduled) {
  for (Workload w : {Workload::kMatmul, Workload::kConv2d, Workload::kDepthwise, Workload::kReduceSum,
                     Workload::kSoftmax, Workload::kFusedConv})
    expect_flattened_equal(w, lower_workload(w), false);
}

TEST(FlattenBlocks, InitRunsAtTheFirstIterationOfEveryReductionLoop) {
  // k split and its outer part moved outermost: the init runs where the
  // reduction variable k0 * 6 + k1 is at its start, inside the k0 loop.
  Schedule sch(lower_workload(Workload::kMatmul));
  std::vector<LoopRV> l = sch.get_loops(sch.get_block("mm"));
  std::vector<LoopRV> k = sch.split(l[2], {4, 6});
  sch.reorder({k[0], l[0], l[1], k[1]});
  tir::PrimFunc flat = tir_passes::flatten_blocks(sch.func());
  std::string text = tir::to_string(flat);
  EXPECT_NE(text.find("if k2_0 * 6 + k2_1 == 0:\n            mm_out[i0, i1] = 0.0f"), std::string::npos)
      << text;
  expect_flattened_equal(Workload::kMatmul, sch.func(), false);
}

TEST(FlattenBlocks, PredicatesOfInexactSplitsBecomeIfs) {
  Schedule sch(lower_workload(Workload::kConv2d));
  std::vector<LoopRV> l = sch.get_loops(sch.get_block(main_block(Workload::kConv2d)));
  sch.split(l[3], {-1, 4});  // 10 columns in tiles of 4
  tir::PrimFunc flat = tir_passes::flatten_blocks(sch.func());
  EXPECT_NE(tir::to_string(flat).find("if "), std::string::npos) << flat;
  expect_flattened_equal(Workload::kConv2d, sch.func(), false);
}

TEST(FlattenBlocks, CpuScheduleWithCachesAndDecomposedReduction) {
  Schedule sch(lower_workload(Workload::kMatmul));
  BlockRV mm = sch.get_block("mm");
  std::vector<LoopRV> l = sch.get_loops(mm);
  std::vector<LoopRV> i = sch.split(l[0], {4, 8});
  BlockRV cache = sch.cache_write(mm, 0, tir::MemScope::kLocal);
  sch.reverse_compute_at(cache, i[0]);
  sch.decompose_reduction(mm, l[2]);
  sch.parallel(i[0]);
  expect_flattened_equal(Workload::kMatmul, sch.func(), false);
}

TEST(FlattenBlocks, GpuScheduleWithSharedCopiesAndBarriers) {
  Schedule sch(lower_workload(Workload::kMatmul));
  BlockRV mm = sch.get_block("mm");
  std::vector<LoopRV> l = sch.get_loops(mm);
  std::vector<LoopRV> y = sch.split(l[0], {4, 8}), x = sch.split(l[1], {2, 8}), k = sch.split(l[2], {4, 6});
  sch.reorder({y[0], x[0], y[1], x[1], k[0], k[1]});
  sch.bind(y[0], "blockIdx.y");
  sch.bind(x[0], "blockIdx.x");
  sch.bind(y[1], "threadIdx.y");
  sch.bind(x[1], "threadIdx.x");
  BlockRV a_shared = sch.cache_read(mm, 1, tir::MemScope::kShared);
  sch.compute_at(a_shared, k[0]);
  std::vector<LoopRV> own = sch.get_loops(a_shared);
  LoopRV fused = sch.fuse({own[own.size() - 2], own.back()});  // the 8 x 6 tile
  std::vector<LoopRV> parts = sch.split(fused, {-1, 8, 8});
  sch.bind(parts[1], "threadIdx.y");
  sch.bind(parts[2], "threadIdx.x");
  tir::PrimFunc flat = tir_passes::flatten_blocks(tir_passes::insert_barriers(sch.func()));
  EXPECT_NE(tir::to_string(flat).find("barrier()"), std::string::npos) << flat;
  expect_flattened_equal(Workload::kMatmul, sch.func(), true);
}

}  // namespace
}  // namespace tessel
