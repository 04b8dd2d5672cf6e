// Text form of the tensor IR, reading like the loop nest a person would write:
//
//   func matmul(A: f32[64, 32], B: f32[32, 16]) -> (C: f32[64, 16]) {
//     for i in 0..64:
//       for j in 0..16:
//         for k in 0..32:
//           block C(vi: spatial[64] = i, vj: spatial[16] = j, vk: reduce[32] = k):
//             reads A[vi, vk], B[vk, vj]
//             writes C[vi, vj]
//             init:
//               C[vi, vj] = 0.0f
//             C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
//   }
//
// Variables print by name, made unique with a suffix where two share a name.
#pragma once

#include <ostream>
#include <string>

#include "ir/tensor/function.h"

namespace tessel::tir {

std::string to_string(const Expr& e);
std::string to_string(const Stmt& s);
std::string to_string(const PrimFunc& f);
std::ostream& operator<<(std::ostream& os, const Expr& e);
std::ostream& operator<<(std::ostream& os, const Stmt& s);
std::ostream& operator<<(std::ostream& os, const PrimFunc& f);

}  // namespace tessel::tir
