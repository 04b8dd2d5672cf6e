// One registration function per op family; OpRegistry::global() calls them all.
#pragma once

namespace tessel::graph {
class OpRegistry;
}

namespace tessel::graph::ops {

void register_elementwise_ops(OpRegistry& r);  // unary, binary, comparison, Where, Clip, Cast
void register_nn_ops(OpRegistry& r);           // Conv, pooling, Gemm, MatMul, normalisations, Softmax
void register_reduce_ops(OpRegistry& r);       // ReduceSum, ReduceMean, ReduceMax, ...
void register_shape_ops(OpRegistry& r);        // Reshape, Flatten, Squeeze, Unsqueeze, Expand, Shape, ...
void register_movement_ops(OpRegistry& r);     // Transpose, Concat, Split, Slice, Pad, Gather
void register_control_ops(OpRegistry& r);      // Scan

inline void register_all(OpRegistry& r) {
  register_elementwise_ops(r);
  register_nn_ops(r);
  register_reduce_ops(r);
  register_shape_ops(r);
  register_movement_ops(r);
  register_control_ops(r);
}

}  // namespace tessel::graph::ops
