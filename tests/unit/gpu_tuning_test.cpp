// The tuner on a GPU target, without a GPU: the GPU space's samples compute
// the reference on the interpreter (every thread order) and replay from
// their traces; a candidate is built, checked and timed on the CUDA
// emulator through the same measurement as on a GPU (device memory, events),
// a wrong one is an error; a short `tessel tune --target cuda-emulated`
// writes a log that compile and check apply for that target only; and
// `--target cuda` without a GPU is refused with the reason.
#include <gtest/gtest.h>

#include <set>

#include "ir/tensor/structural.h"
#include "src/codegen/cuda/nvrtc_library.h"
#include "tests/unit/cli_runner.h"
#include "tests/unit/sanitized.h"
#include "tests/unit/sched_workloads_util.h"
#include "tests/unit/tune_cli_util.h"
#include "tuner/measure/measure.h"
#include "tuner/search/candidate.h"

namespace tessel {
namespace {

using cli_test::contains;
using cli_test::Result;
using cli_test::run_tessel;
using cli_test::run_tessel_line;
using tune_cli_test::kTinyCnn;
using tune_cli_test::lines_of;

const tune::ScheduleSpace kGpuSpace = sched::GpuScheduleOptions{};

TEST(GpuTuning, EverySampleOfTheGpuSpaceComputesTheReferenceAndReplays) {
  using namespace sched_workloads;
  for (Workload w : kAllWorkloads) {
    tir::PrimFunc f = lower_workload(w);
    std::set<uint64_t> distinct;
    for (uint64_t seed = 1; seed <= uint64_t(test_support::sweep_samples(5)); ++seed) {
      SCOPED_TRACE(std::string(workload_name(w)) + " seed " + std::to_string(seed));
      std::optional<tune::Candidate> c = tune::make_candidate(f, kGpuSpace, {}, seed);
      ASSERT_TRUE(c);
      EXPECT_EQ(check_against(reference(w), c->flat, true, kAllOrders), "");
      sched::Schedule replay(f);
      sched::Trace::from_json(c->trace).apply(replay);
      EXPECT_TRUE(tir::structural_equal(kGpuSpace.prepare(replay.func()), c->flat));
      // Its knobs alone make the same program.
      std::optional<tune::Candidate> again = tune::make_candidate(f, kGpuSpace, c->knobs);
      ASSERT_TRUE(again);
      EXPECT_EQ(again->hash, c->hash);
      distinct.insert(c->hash);
    }
    if (w == Workload::kMatmul && !test_support::kAddressSanitizer) {
      EXPECT_GT(distinct.size(), 2u) << "the matmul's tiles are searched";
    }
  }
}

TEST(GpuTuning, ACandidateIsCheckedAndTimedOnTheEmulator) {
  tir::PrimFunc f = sched_workloads::lower_workload(sched_workloads::Workload::kMatmul);
  codegen::Target emulated = codegen::parse_target("cuda-emulated");
  tune::Candidate c = *tune::make_candidate(f, kGpuSpace, {}, 3);
  std::vector<Tensor> inputs = tune::random_task_inputs(c.flat, 11);
  std::vector<Tensor> want = tune::run_once(emulated, c.flat, inputs);
  ASSERT_EQ(want.size(), 1u);
  std::vector<Tensor> interpreted = tir::interpret(f, inputs);
  EXPECT_EQ(sched_workloads::compare_outputs(want, interpreted), "");
  tune::MeasureOptions quick = tune::checked_against(want, {});
  quick.repeat = 3;
  quick.warmup = 1;
  quick.flush_bytes = 1 << 16;
  tune::Measurement m = tune::measure_candidate(emulated, c.flat, inputs, want, quick);
  ASSERT_TRUE(m.ok()) << m.error;
  EXPECT_EQ(m.times_ms.size(), 3u);
  for (double t : m.times_ms) EXPECT_GT(t, 0);
  std::vector<Tensor> wrong = {want[0].clone()};
  wrong[0].set_f64(5, wrong[0].get_f64(5) + 1);
  tune::Measurement bad = tune::measure_candidate(emulated, c.flat, inputs, wrong, quick);
  EXPECT_FALSE(bad.ok());
  EXPECT_TRUE(contains(bad.error, "wrong output: output 0[5]")) << bad.error;
  tune::Candidate other = *tune::make_candidate(f, kGpuSpace, {}, 4);
  tune::Comparison vs = tune::compare_with_baseline(emulated, c.flat, other.flat, inputs, want, quick);
  ASSERT_TRUE(vs.ok()) << vs.error;
  EXPECT_GT(vs.ratio, 0);
}

TEST(GpuTuning, ASessionOnTheEmulatorWritesALogForThatTargetOnly) {
  cli_test::TempDir dir;
  std::filesystem::path log = dir / "gpu.jsonl";
  std::vector<std::string> args = tune_cli_test::tune_args(log, 9);
  args.insert(args.end(), {"--target", "cuda-emulated", "--cache-flush", "none"});
  Result tune = run_tessel(args);
  ASSERT_EQ(tune.code, 0) << tune.out << tune.err;
  EXPECT_TRUE(
      contains(tune.err, "6 kernels, 6 tasks; target cuda-emulated -arch=sm_90, sm_90 emulated on this CPU"))
      << tune.err;
  EXPECT_TRUE(contains(tune.err, "[9/9 trials]")) << tune.err;
  std::vector<std::string> records = lines_of(log);
  ASSERT_EQ(records.size(), 9u) << "no conv layout decisions on a GPU";
  for (const std::string& r : records)
    EXPECT_TRUE(contains(r, "\"target\":\"cuda-emulated -arch=sm_90\"")) << r;
  EXPECT_TRUE(contains(records.back(), "\"knobs\":{\"")) << records.back();

  Result compile =
      run_tessel({"compile", kTinyCnn, "--input-shape", "image=1x1x28x28", "--target", "cuda-emulated",
                  "--tuning-log", log.string(), "-o", (dir / "tiny.so").string()});
  ASSERT_EQ(compile.code, 0) << compile.err;
  EXPECT_TRUE(contains(compile.out, "6 kernels (fusion default, schedule default, 6 tuned)")) << compile.out;
  Result check = run_tessel({"check", kTinyCnn, "--input-shape", "image=1x1x28x28", "--target",
                             "cuda-emulated", "--tuning-log", log.string(), "--per-kernel"});
  EXPECT_EQ(check.code, 0) << check.out << check.err;
  EXPECT_TRUE(contains(check.out, "check passed")) << check.out;
  // The emulator's times say nothing of a GPU's, nor of the CPU backend's code.
  for (const char* target : {"cuda", "llvm"}) {
    Result other = run_tessel({"compile", kTinyCnn, "--input-shape", "image=1x1x28x28", "--target", target,
                               "--tuning-log", log.string(), "-o", (dir / "other.so").string()});
    if (std::string(target) == "cuda" && !codegen::load_nvrtc()) continue;
    ASSERT_EQ(other.code, 0) << other.err;
    EXPECT_TRUE(contains(other.out, "0 tuned")) << other.out;
    EXPECT_TRUE(contains(other.err, "9 records for another target or compiler version left out"))
        << other.err;
  }
}

TEST(GpuTuning, TuningForAGpuWithoutOneSaysWhy) {
  std::string tune = "tune " + cli_test::quote(kTinyCnn) +
                     " --input-shape image=1x1x28x28 --target cuda --trials 2 --log /tmp/never_written.jsonl";
  Result r = run_tessel_line(tune, "TESSEL_LIBCUDA=/nonexistent/libcuda.so.1");
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_TRUE(contains(r.err,
                       "tessel: error: tessel tune --target cuda measures candidates on a GPU, and this "
                       "machine has none it can use (no CUDA driver (/nonexistent/libcuda.so.1: "))
      << r.err;
  EXPECT_TRUE(contains(r.err, "--target cuda-emulated searches on the CUDA emulator")) << r.err;
  EXPECT_FALSE(std::filesystem::exists("/tmp/never_written.jsonl"));
}

}  // namespace
}  // namespace tessel
