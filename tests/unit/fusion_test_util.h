// What the fusion policy tests share: seeded random tensors and a grouping
// as lists of node names.
#pragma once

#include <random>
#include <string>
#include <vector>

#include "ir/core/tensor.h"
#include "ir/graph/graph.h"
#include "src/passes/fusion.h"

namespace tessel::fusion_test {

using Members = std::vector<std::vector<std::string>>;

inline Tensor random_tensor(Dims shape, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  Tensor t(DType::kF32, std::move(shape));
  for (int64_t i = 0; i < t.numel(); ++i) t.set_f64(i, dist(rng));
  return t;
}

// The policy's groups, each as its nodes' names in order.
inline Members grouped(const graph::Graph& g, passes::FusionPolicy policy) {
  Members out;
  for (const passes::NodeGroup& group : passes::make_grouping_policy(policy)->group(g)) {
    out.emplace_back();
    for (const graph::Node* n : group.nodes) out.back().push_back(n->name);
  }
  return out;
}

}  // namespace tessel::fusion_test
