// The tensor IR interpreter on GPU-style functions: thread blocks, shared and
// local buffers, barriers as phase boundaries (and what goes wrong without
// one), divergent barriers, and thread orders.
#include <gtest/gtest.h>

#include <random>

#include "ir/tensor/functor.h"
#include "ir/tensor/interpreter.h"
#include "tests/unit/tir_test_util.h"

namespace tessel::tir {
namespace {

constexpr int64_t kBlocks = 3, kThreads = 8;

Tensor iota_f32(int64_t n) {
  Tensor t(DType::kF32, {n});
  for (int64_t i = 0; i < n; ++i) t.data<float>()[i] = float(i * i % 17);
  return t;
}

Stmt thread_loop(Var v, int64_t extent, const char* tag, Stmt body) {
  return make_for(std::move(v), int_imm(0), int_imm(extent), ForKind::kThreadBound, std::move(body), tag);
}

// Where S is declared: the root block, an Allocate inside the thread loop,
// or the alloc_buffers of a block inside the thread loop (whose body then
// holds the barrier).
enum class SharedAt { kRoot, kInsideThreadLoop, kInBlock };
constexpr SharedAt kAllPlaces[] = {SharedAt::kRoot, SharedAt::kInsideThreadLoop, SharedAt::kInBlock};

// for bx in blockIdx.x, tx in threadIdx.x:
//   S[tx] = A[bx * T + tx]; barrier; B[bx * T + tx] = S[(tx + 1) % T]
PrimFunc neighbour_kernel(bool with_barrier, SharedAt shared_at) {
  Buffer a = make_buffer("A", DType::kF32, {kBlocks * kThreads}),
         b = make_buffer("B", DType::kF32, {kBlocks * kThreads});
  Buffer s = make_buffer("S", DType::kF32, {kThreads}, MemScope::kShared);
  Var bx = var("bx"), tx = var("tx"), vb = var("vb"), vt = var("vt");
  bool in_block = shared_at == SharedAt::kInBlock;
  Expr block_idx = in_block ? Expr(vb) : Expr(bx), thread_idx = in_block ? Expr(vt) : Expr(tx);
  Expr global = block_idx * kThreads + thread_idx;
  std::vector<Stmt> phases = {make_store(s, load(a, {global}), {thread_idx})};
  if (with_barrier) phases.push_back(make_barrier());
  phases.push_back(make_store(b, load(s, {floormod(thread_idx + 1, kThreads)}), {global}));
  Stmt body = make_seq(phases);
  if (shared_at == SharedAt::kInsideThreadLoop) body = make_allocate(s, body);
  if (in_block) {
    std::vector<IterVar> iters = {{vb, {int_imm(0), int_imm(kBlocks)}, IterKind::kSpatial},
                                  {vt, {int_imm(0), int_imm(kThreads)}, IterKind::kSpatial}};
    AccessRegions regions = detect_access_regions(Stmt{}, body, {s});
    body = make_ref<BlockNode>("K", iters, std::vector<Expr>{bx, tx}, bool_imm(true), regions.reads,
                               regions.writes, Stmt{}, body, std::vector<Buffer>{s}, Annotations{});
  }
  Stmt kernel = make_for(bx, int_imm(0), int_imm(kBlocks), ForKind::kThreadBound,
                         thread_loop(tx, kThreads, "threadIdx.x", body), "blockIdx.x");
  std::vector<Buffer> root_allocs;
  if (shared_at == SharedAt::kRoot) root_allocs.push_back(s);
  return make_prim_func("neighbour", {a}, {b}, make_root_block(kernel, root_allocs));
}

std::vector<float> expected_neighbours(const Tensor& a) {
  std::vector<float> out(size_t(kBlocks * kThreads));
  for (int64_t bx = 0; bx < kBlocks; ++bx)
    for (int64_t tx = 0; tx < kThreads; ++tx)
      out[size_t(bx * kThreads + tx)] = a.data<float>()[bx * kThreads + (tx + 1) % kThreads];
  return out;
}

std::vector<float> floats(const Tensor& t) {
  return std::vector<float>(t.data<float>(), t.data<float>() + t.numel());
}

std::string error_of(const PrimFunc& f, const std::vector<Tensor>& inputs, InterpretOptions options = {}) {
  try {
    interpret(f, inputs, options);
  } catch (const InterpreterError& e) {
    return e.what();
  }
  return "no error";
}

TEST(TirInterpreterGpu, BarrierMakesNeighbourReadsCorrectInEveryOrder) {
  Tensor a = iota_f32(kBlocks * kThreads);
  for (SharedAt at : kAllPlaces)
    for (ThreadOrder order : {ThreadOrder::kForward, ThreadOrder::kReverse, ThreadOrder::kShuffled}) {
      InterpretOptions options{order, 42};
      EXPECT_EQ(floats(interpret(neighbour_kernel(true, at), {a}, options)[0]), expected_neighbours(a))
          << int(at) << " " << int(order);
    }
}

TEST(TirInterpreterGpu, MissingBarrierIsCaught) {
  Tensor a = iota_f32(kBlocks * kThreads);
  for (SharedAt at : kAllPlaces) {
    PrimFunc racy = neighbour_kernel(false, at);
    for (ThreadOrder order : {ThreadOrder::kForward, ThreadOrder::kReverse}) {
      // Each thread runs to completion before the next: the neighbour's
      // element is either not written yet or belongs to another instance.
      std::string message = error_of(racy, {a}, {order});
      EXPECT_NE(message.find("read of uninitialised S["), std::string::npos) << message;
    }
  }
}

TEST(TirInterpreterGpu, LocalBuffersArePerThread) {
  // L is declared in the root block: for tx: L[0] = A[tx] * 2; barrier; B[tx] = L[0] + 1
  Buffer a = make_buffer("A", DType::kF32, {kThreads}), b = make_buffer("B", DType::kF32, {kThreads});
  Buffer l = make_buffer("L", DType::kF32, {1}, MemScope::kLocal);
  Var tx = var("tx");
  Stmt body = make_seq({make_store(l, load(a, {tx}) * float_imm(2.0), {int_imm(0)}), make_barrier(),
                        make_store(b, load(l, {int_imm(0)}) + float_imm(1.0), {tx})});
  PrimFunc f =
      make_prim_func("local", {a}, {b}, make_root_block(thread_loop(tx, kThreads, "threadIdx.x", body), {l}));
  Tensor in = iota_f32(kThreads);
  Tensor out = interpret(f, {in}, {ThreadOrder::kReverse})[0];
  for (int64_t i = 0; i < kThreads; ++i) EXPECT_EQ(out.data<float>()[i], in.data<float>()[i] * 2.0f + 1.0f);
}

TEST(TirInterpreterGpu, SharedMemoryLivesForTheWholeBlockIteration) {
  // Block 0 fills S in one thread loop and reads it in a second one: both
  // loops belong to the same blockIdx iteration and share S. Block 1 gets a
  // fresh, unwritten S, so a second block fails.
  auto kernel = [](int64_t blocks) {
    Buffer a = make_buffer("A", DType::kF32, {kThreads}),
           b = make_buffer("B", DType::kF32, {blocks, kThreads});
    Buffer s = make_buffer("S", DType::kF32, {kThreads}, MemScope::kShared);
    Var bx = var("bx"), t1 = var("t1"), t2 = var("t2");
    Stmt fill = make_if(eq(bx, int_imm(0)),
                        thread_loop(t1, kThreads, "threadIdx.x", make_store(s, load(a, {t1}), {t1})));
    Stmt use = thread_loop(t2, kThreads, "threadIdx.x",
                           make_store(b, load(s, {floormod(t2 + 1, kThreads)}), {bx, t2}));
    Stmt nest =
        make_for(bx, int_imm(0), int_imm(blocks), ForKind::kThreadBound, make_seq({fill, use}), "blockIdx.x");
    return make_prim_func("two_loops", {a}, {b}, make_root_block(nest, {s}));
  };
  Tensor in = iota_f32(kThreads);
  std::vector<float> one_block = floats(interpret(kernel(1), {in})[0]);
  for (int64_t t = 0; t < kThreads; ++t)
    EXPECT_EQ(one_block[size_t(t)], in.data<float>()[(t + 1) % kThreads]);
  std::string message = error_of(kernel(2), {in});
  EXPECT_NE(message.find("read of uninitialised S[1]"), std::string::npos) << message;
}

TEST(TirInterpreterGpu, DivergentBarrierIsReported) {
  Buffer s = make_buffer("S", DType::kF32, {kThreads}, MemScope::kShared);
  Buffer b = make_buffer("B", DType::kF32, {kThreads});
  Var tx = var("tx"), k = var("k"), inner = var("inner");
  Stmt write = make_store(s, float_imm(1.0), {tx});
  auto kernel = [&](Stmt body) {
    return make_prim_func("divergent", {}, {b},
                          make_root_block(thread_loop(tx, kThreads, "threadIdx.x",
                                                      make_seq({body, make_store(b, load(s, {tx}), {tx})})),
                                          {s}));
  };
  // if tx < 4: { S[tx] = 1; barrier }
  std::string message = error_of(kernel(make_if(tx < int_imm(4), make_seq({write, make_barrier()}))), {});
  EXPECT_NE(message.find("divergent barrier"), std::string::npos) << message;
  // for k in 0..tx: barrier
  message =
      error_of(kernel(make_seq({write, make_for(k, int_imm(0), tx, ForKind::kSerial, make_barrier())})), {});
  EXPECT_NE(message.find("divergent barrier: the extent of loop k"), std::string::npos) << message;
  // a nested threadIdx.x loop of extent 4 with a barrier: threads 4..7 skip it
  message = error_of(kernel(make_seq({write, thread_loop(inner, 4, "threadIdx.x", make_barrier())})), {});
  EXPECT_NE(message.find("skips loop inner"), std::string::npos) << message;
  // the uniform version of the first kernel is fine
  EXPECT_EQ(error_of(kernel(make_if(int_imm(0) < int_imm(4), make_seq({write, make_barrier()}))), {}),
            "no error");
}

TEST(TirInterpreterGpu, ThreadExtentBoundInsideTheBlockIsReported) {
  // for tx in threadIdx.x(4): for ty in threadIdx.y(tx + 1): B[tx, ty] = 1 -- the
  // launch cannot be sized before the threads exist.
  Buffer b = make_buffer("B", DType::kI64, {4, 4});
  Var tx = var("tx"), ty = var("ty");
  Stmt inner = make_for(ty, int_imm(0), tx + 1, ForKind::kThreadBound, make_store(b, int_imm(1), {tx, ty}),
                        "threadIdx.y");
  PrimFunc f =
      make_prim_func("ragged", {}, {b}, make_root_block(thread_loop(tx, 4, "threadIdx.x", inner), {}));
  std::string message = error_of(f, {});
  EXPECT_NE(message.find("threadIdx.y loop below loop tx depends on variable tx"), std::string::npos)
      << message;
}

TEST(TirInterpreterGpu, BoundMatmulMatchesSerialMatmul) {
  // i -> blockIdx.x, j -> threadIdx.x: the reduction block runs per thread.
  struct Bind : StmtMutator {
    Stmt mutate_for(const ForNode& loop, const Stmt& self) override {
      Stmt inner = StmtMutator::mutate_for(loop, self);
      const ForNode* f = inner.as<ForNode>();
      if (loop.var->name == "i") return with_kind(*f, ForKind::kThreadBound, "blockIdx.x");
      if (loop.var->name == "j") return with_kind(*f, ForKind::kThreadBound, "threadIdx.x");
      return inner;
    }
  } bind;
  PrimFunc serial = make_matmul_func(4, 6, 5);
  PrimFunc gpu = with_body(*serial, bind.mutate(serial->body));
  std::mt19937 rng(9);
  std::uniform_real_distribution<float> dist(-1, 1);
  Tensor a(DType::kF32, {4, 5}), b(DType::kF32, {5, 6});
  for (int64_t i = 0; i < a.numel(); ++i) a.data<float>()[i] = dist(rng);
  for (int64_t i = 0; i < b.numel(); ++i) b.data<float>()[i] = dist(rng);
  std::vector<float> want = floats(interpret(serial, {a, b})[0]);
  for (ThreadOrder order : {ThreadOrder::kForward, ThreadOrder::kReverse, ThreadOrder::kShuffled})
    EXPECT_EQ(floats(interpret(gpu, {a, b}, {order, 3})[0]), want);
}

}  // namespace
}  // namespace tessel::tir
