// The integer products of the quantized ops (MatMulInteger, QLinearMatMul,
// ConvInteger, QLinearConv): 8-bit operands with their zero points
// subtracted, multiplied and summed to the exact int32 result int32
// accumulation gives.
//
// The sums are computed in f32 lanes where that is exact: a product of two
// centred 8-bit values is an integer below 2^16 in magnitude, and f32 holds
// every integer up to 2^24, so a sum is exact at every step while every
// partial sum stays under 2^24: at most 2^24 / (|a| max * |b| max) products
// (bounds from the dtypes or constant values), or, with constant weights,
// as long as |a| max times each output's sum of |weights| stays under it. A
// longer reduction is split into such chunks (input channels of a Conv, K of
// a MatMul), each converted to int32 and added in int32. The bound holds for
// every subset of the products, so any order or split of the reduction a
// schedule picks stays exact; a kernel that transformed its operands first
// (Winograd, FFT) would not. The float products run on the vectorized,
// register-tiled float kernels; an int32 product (what a grouped Conv whose
// groups are each too long falls back to) runs at the integer multiply's
// lower rate.
#pragma once

#include "src/frontend/onnx/adapters.h"

namespace tessel::onnx_frontend {

// An operand as int32 with its zero point (or none) subtracted; a per-row
// zero point of A ([M]) lines up with A's rows.
graph::Value* centred(AdaptContext& c, graph::Value* v, graph::Value* zero_point, bool per_row);

// (A - a_zero) x (B - b_zero) ([..., M, N]); A and B are int8 or uint8. The
// exact sum int32 accumulation gives (short of wrapping around), in f32 (one
// exact chunk), f64 (chunks added) or int32 (the products computed in int32).
graph::Value* integer_matmul(AdaptContext& c, graph::Value* a, graph::Value* a_zero, graph::Value* b,
                             graph::Value* b_zero);

// Conv(x - x_zero, w - w_zero), with the Conv attributes of the node being
// adapted; w_zero is a scalar or one per output channel. The sum in f32, f64
// or int32, as integer_matmul's.
graph::Value* integer_conv(AdaptContext& c, graph::Value* x, graph::Value* x_zero, graph::Value* w,
                           graph::Value* w_zero);

// A zero point or scale per output channel ([M]) laid along axis `axis` of a
// rank-`rank` tensor; a scalar (or [1]) as is.
graph::Value* per_channel(AdaptContext& c, graph::Value* v, int64_t axis, int64_t rank);

}  // namespace tessel::onnx_frontend
