// The parts of the nn op family's registration, one per file; register_nn_ops
// (nn.cpp) calls them all.
#pragma once

namespace tessel::graph {
class OpRegistry;
}

namespace tessel::graph::ops {

void register_linear_ops(OpRegistry& r);     // MatMul, Gemm (nn.cpp)
void register_conv_pool_ops(OpRegistry& r);  // Conv, ConvTranspose, pooling (nn_conv_pool.cpp)
void register_norm_ops(OpRegistry& r);       // normalisations, Softmax, LogSoftmax (nn_norm.cpp)

}  // namespace tessel::graph::ops
