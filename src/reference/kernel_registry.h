// Reference kernels: naive, obviously-correct C++ for every graph op. A kernel
// receives its inputs and outputs already allocated with their exact shapes
// (from the op's shape function run on the actual input values).
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "ir/graph/graph.h"

namespace tessel::reference {

using Kernel = std::function<void(const graph::Node& node, const std::vector<const Tensor*>& inputs,
                                  std::vector<Tensor>& outputs)>;

class KernelRegistry {
 public:
  static const KernelRegistry& global();
  void add(const std::string& op, Kernel k);
  const Kernel* find(const std::string& op) const;
  std::vector<std::string> ops() const;

 private:
  std::map<std::string, Kernel> kernels_;
};

namespace kernels {
void register_elementwise(KernelRegistry& r);
void register_nn(KernelRegistry& r);
void register_reduce(KernelRegistry& r);
void register_shape(KernelRegistry& r);
void register_movement(KernelRegistry& r);
void register_control(KernelRegistry& r);  // Scan (scan.cpp)
}  // namespace kernels

}  // namespace tessel::reference
