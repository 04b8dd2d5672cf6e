// Reference kernels of the nn ops: the family's entry point. The kernels live
// in conv.cpp, pool.cpp, matmul.cpp, norm.cpp and softmax.cpp.
#include "src/reference/kernels/nn_kernels.h"

#include "src/reference/kernels/element_access.h"

namespace tessel::reference::kernels {

Kernel through_f32(Kernel k) {
  return [k](const graph::Node& node, const std::vector<const Tensor*>& in, std::vector<Tensor>& out) {
    DType t = in.empty() || !in[0] ? DType::kF32 : in[0]->dtype();
    if (t != DType::kF16 && t != DType::kBF16) return k(node, in, out);
    std::vector<Tensor> copies;  // the f32 inputs, kept alive for the call
    copies.reserve(in.size());
    std::vector<const Tensor*> in32;
    for (const Tensor* x : in) {
      if (x && x->dtype() == t) {
        copies.push_back(converted(*x, DType::kF32));
        in32.push_back(&copies.back());
      } else {
        in32.push_back(x);
      }
    }
    std::vector<Tensor> out32;
    for (const Tensor& y : out) out32.emplace_back(y.dtype() == t ? DType::kF32 : y.dtype(), y.shape());
    k(node, in32, out32);
    for (size_t i = 0; i < out.size(); ++i) out[i] = out[i].dtype() == t ? converted(out32[i], t) : out32[i];
  };
}

void register_nn(KernelRegistry& r) {
  register_conv_kernels(r);
  register_pool_kernels(r);
  register_linear_kernels(r);
  register_norm_kernels(r);
  register_softmax_kernels(r);
}

}  // namespace tessel::reference::kernels
