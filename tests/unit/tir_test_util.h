// Small builders of tensor IR functions for the unit tests: a matmul PrimFunc
// with one reduction block, and the block builder it uses.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/tensor/access_region.h"
#include "ir/tensor/function.h"

namespace tessel::tir {

// A block with reads and writes detected from its body (predicate true, no
// allocations, no annotations).
inline Stmt make_test_block(std::string name, std::vector<IterVar> iter_vars, std::vector<Expr> iter_values,
                            Stmt init, Stmt body) {
  AccessRegions regions = detect_access_regions(init, body);
  return make_ref<BlockNode>(std::move(name), std::move(iter_vars), std::move(iter_values), bool_imm(true),
                             std::move(regions.reads), std::move(regions.writes), std::move(init),
                             std::move(body), std::vector<Buffer>{}, Annotations{});
}

// C[M, N] = A[M, K] x B[K, N] in f32, as the loop nest
//   for i in 0..M: for j in 0..N: for k in 0..K:
//     block C(vi: spatial[M] = i, vj: spatial[N] = j, vk: reduce[K] = k):
//       init: C[vi, vj] = 0.0f
//       C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
// under a root block without allocations. The function is named "matmul".
inline PrimFunc make_matmul_func(int64_t M, int64_t N, int64_t K) {
  Buffer a = make_buffer("A", DType::kF32, {M, K});
  Buffer b = make_buffer("B", DType::kF32, {K, N});
  Buffer c = make_buffer("C", DType::kF32, {M, N});
  Var i = var("i"), j = var("j"), k = var("k");
  Var vi = var("vi"), vj = var("vj"), vk = var("vk");
  std::vector<IterVar> iter_vars = {{vi, {int_imm(0), int_imm(M)}, IterKind::kSpatial},
                                    {vj, {int_imm(0), int_imm(N)}, IterKind::kSpatial},
                                    {vk, {int_imm(0), int_imm(K)}, IterKind::kReduce}};
  Stmt init = make_store(c, float_imm(0.0), {vi, vj});
  Stmt update = make_store(c, load(c, {vi, vj}) + load(a, {vi, vk}) * load(b, {vk, vj}), {vi, vj});
  Stmt block = make_test_block("C", std::move(iter_vars), {i, j, k}, std::move(init), std::move(update));
  Stmt nest = make_for(i, int_imm(0), int_imm(M), ForKind::kSerial,
                       make_for(j, int_imm(0), int_imm(N), ForKind::kSerial,
                                make_for(k, int_imm(0), int_imm(K), ForKind::kSerial, block)));
  return make_prim_func("matmul", {a, b}, {c}, make_root_block(nest, {}));
}

}  // namespace tessel::tir
