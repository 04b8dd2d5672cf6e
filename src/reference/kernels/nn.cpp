// Reference kernels of the nn ops: the family's entry point. The kernels live
// in conv.cpp, pool.cpp, matmul.cpp, norm.cpp and softmax.cpp.
#include "src/reference/kernels/nn_kernels.h"

namespace tessel::reference::kernels {

void register_nn(KernelRegistry& r) {
  register_conv_kernels(r);
  register_pool_kernels(r);
  register_linear_kernels(r);
  register_norm_kernels(r);
  register_softmax_kernels(r);
}

}  // namespace tessel::reference::kernels
