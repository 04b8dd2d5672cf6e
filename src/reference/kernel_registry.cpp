// The global table of reference kernels.
#include "src/reference/kernel_registry.h"

namespace tessel::reference {

void KernelRegistry::add(const std::string& op, Kernel k) {
  TESSEL_ICHECK(!kernels_.count(op)) << "reference kernel for " << op << " registered twice";
  kernels_[op] = std::move(k);
}

const Kernel* KernelRegistry::find(const std::string& op) const {
  auto it = kernels_.find(op);
  return it == kernels_.end() ? nullptr : &it->second;
}

std::vector<std::string> KernelRegistry::ops() const {
  std::vector<std::string> out;
  for (const auto& [op, k] : kernels_) out.push_back(op);
  return out;
}

const KernelRegistry& KernelRegistry::global() {
  static const KernelRegistry registry = [] {
    KernelRegistry r;
    kernels::register_elementwise(r);
    kernels::register_nn(r);
    kernels::register_reduce(r);
    kernels::register_shape(r);
    kernels::register_movement(r);
    kernels::register_control(r);
    return r;
  }();
  return registry;
}

}  // namespace tessel::reference
