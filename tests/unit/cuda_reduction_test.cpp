// Reductions across the threads of a block: the default GPU schedule gives a
// reduction with few outputs a thread block each, the CUDA C combines the
// threads' values (shuffles, then one value per warp in shared memory), and
// the emulator's result is the interpreter's; a loop whose threads would all
// write one place some other way is refused.
#include <gtest/gtest.h>

#include "ir/tensor/interpreter.h"
#include "ir/tensor/printer.h"
#include "src/codegen/cuda/cuda_codegen.h"
#include "src/codegen/cuda/cuda_emulator.h"
#include "src/runtime/gpu/gpu_runner.h"
#include "tests/unit/cuda_test_util.h"

namespace tessel::tir {
namespace {

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// out[i] = max (or sum) over k of A[i, k], as one reduction block.
PrimFunc row_reduce(int64_t rows, int64_t cols, bool take_max) {
  Buffer a = make_buffer("A", DType::kF32, {rows, cols}), out = make_buffer("out", DType::kF32, {rows});
  Var i = var("i"), k = var("k"), vi = var("vi"), vk = var("vk");
  std::vector<IterVar> iters = {{vi, {int_imm(0), int_imm(rows)}, IterKind::kSpatial},
                                {vk, {int_imm(0), int_imm(cols)}, IterKind::kReduce}};
  Expr x = load(a, {vi, vk});
  Stmt init = make_store(out, float_imm(take_max ? -1e30 : 0.0), {vi});
  Stmt update = make_store(out, take_max ? max(load(out, {vi}), x) : load(out, {vi}) + x, {vi});
  Stmt block = make_test_block("R", iters, {i, k}, init, update);
  Stmt nest = make_for(i, int_imm(0), int_imm(rows), ForKind::kSerial,
                       make_for(k, int_imm(0), int_imm(cols), ForKind::kSerial, block));
  return make_prim_func("row_reduce", {a}, {out}, make_root_block(nest, {}));
}

PrimFunc scheduled(const PrimFunc& f) {
  sched::Schedule sch(f);
  sched::apply_default_gpu_schedule(sch);
  return sch.func();
}

// shuffles: the GPU's way (warp shuffles, emulated), else the emulator's own.
std::vector<double> emulated(const PrimFunc& flat, const Tensor& a, int64_t rows, bool shuffles) {
  codegen::CudaProgram p = codegen::generate_cuda({{"k_reduce", flat}}, codegen::GpuTarget{});
  std::string source = (shuffles ? "#define TESSEL_EMULATE_WARP_SHUFFLES 1\n" : "") + p.source;
  rt::GpuRunner runner(codegen::gpu_program(p), codegen::open_emulated_device(source));
  Tensor out(DType::kF32, {rows});
  std::vector<void*> args = {const_cast<void*>(a.raw()), out.raw()};
  EXPECT_EQ(runner.call_host(runner.index("k_reduce"), args.data()), 0);
  return out.to_f64_vector();
}

TEST(CudaReduction, FewOutputsGetABlockEachWhoseThreadsShareTheReduction) {
  PrimFunc f = scheduled(row_reduce(6, 1000, false));
  std::string text = to_string(f);
  EXPECT_TRUE(contains(text, "in 0..6 thread_bound(blockIdx.x)")) << text;
  EXPECT_TRUE(contains(text, "in 0..256 thread_bound(threadIdx.x)")) << text;
  Tensor a = ramp({6, 1000}, 0.25);
  EXPECT_EQ(interpret(f, {a})[0].to_f64_vector(),
            interpret(row_reduce(6, 1000, false), {a})[0].to_f64_vector());

  codegen::CudaProgram p = codegen::generate_cuda({{"k_reduce", flattened(f)}}, codegen::GpuTarget{});
  const codegen::CudaLaunch& l = p.functions[0].launches[0];
  EXPECT_TRUE(l.has_barrier);
  EXPECT_GE(l.shared_bytes, 256 * 8);
  EXPECT_TRUE(contains(p.source, "= tessel_block_add_f32(TESSEL_THREAD_ARG ")) << p.source;
  EXPECT_TRUE(contains(p.source, "if (threadIdx.x == 0) out[")) << p.source;
}

TEST(CudaReduction, ManyOutputsKeepAThreadEach) {
  std::string text = to_string(scheduled(row_reduce(300000, 64, false)));
  EXPECT_TRUE(contains(text, "in 0..256 thread_bound(threadIdx.x)")) << text;
  EXPECT_FALSE(contains(text, "k_1 in 0..")) << "the reduction stays in its thread: " << text;
}

TEST(CudaReduction, TheEmulatedBlockCombinesAsTheInterpreterDoes) {
  for (auto [take_max, shuffles] : {std::pair{false, true}, {true, true}, {false, false}, {true, false}}) {
    PrimFunc f = row_reduce(5, 777, take_max);  // 777: the last step of each thread guarded
    Tensor a = ramp({5, 777}, take_max ? 1.5 : 0.125);
    std::vector<double> want = interpret(f, {a})[0].to_f64_vector();
    std::vector<double> got = emulated(flattened(scheduled(f)), a, 5, shuffles);
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < want.size(); ++i)
      EXPECT_NEAR(got[i], want[i], 1e-4 * std::abs(want[i]) + 1e-6) << i;
  }
}

// Every thread writes out[0] = A[t]: the last one wins on a GPU, in no fixed order.
TEST(CudaReduction, ThreadsThatAllWriteOnePlaceOtherwiseAreRefused) {
  Buffer a = make_buffer("A", DType::kF32, {64}), out = make_buffer("out", DType::kF32, {1});
  Var t = var("t");
  Stmt body = make_for(t, int_imm(0), int_imm(64), ForKind::kThreadBound,
                       make_store(out, load(a, {t}), {int_imm(0)}), "threadIdx.x");
  PrimFunc racy = flattened(make_prim_func("racy", {a}, {out}, make_root_block(body, {})));
  EXPECT_THROW(codegen::generate_cuda({{"k_racy", racy}}, codegen::GpuTarget{}), InternalError);
}

}  // namespace
}  // namespace tessel::tir
