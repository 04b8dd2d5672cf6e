#include "src/passes/fusion_regions.h"

#include <algorithm>
#include <numeric>
#include <unordered_map>
#include <unordered_set>

#include "ir/core/diagnostics.h"
#include "src/passes/fusion/grouping_util.h"

namespace tessel::passes {

namespace {

using graph::Node;
using NodeLists = std::vector<std::vector<const Node*>>;

std::unordered_map<const Node*, size_t> group_of_node(const graph::Graph& g, const std::vector<NodeGroup>& groups) {
  std::unordered_map<const Node*, size_t> out;
  for (size_t i = 0; i < groups.size(); ++i)
    for (const Node* n : groups[i].nodes) TESSEL_ICHECK(out.emplace(n, i).second) << n->name << " is in two groups";
  TESSEL_ICHECK(out.size() == g.num_nodes()) << "a grouping of " << g.name << " leaves nodes out";
  return out;
}

struct UnionFind {
  explicit UnionFind(size_t n) : parent(n) { std::iota(parent.begin(), parent.end(), size_t(0)); }
  size_t find(size_t x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
  }
  void join(size_t a, size_t b) { parent[find(a)] = find(b); }
  std::vector<size_t> parent;
};

// Whether the alternative has a group with exactly this base group's nodes.
bool agreed(const NodeGroup& group, const std::unordered_map<const Node*, size_t>& alt_of,
            const std::vector<NodeGroup>& alternative) {
  size_t j = alt_of.at(group.nodes.front());
  if (alternative[j].nodes.size() != group.nodes.size()) return false;
  return std::all_of(group.nodes.begin(), group.nodes.end(), [&](const Node* n) { return alt_of.at(n) == j; });
}

}  // namespace

std::vector<FusionRegion> fusion_regions(const graph::Graph& g, const std::vector<NodeGroup>& base,
                                         const std::vector<NodeGroup>& alternative) {
  std::unordered_map<const Node*, size_t> base_of = group_of_node(g, base), alt_of = group_of_node(g, alternative);
  // Base groups are 0..B-1, alternative groups B..B+A-1; a base group and an
  // alternative group sharing a node are in one region.
  UnionFind sets(base.size() + alternative.size());
  std::vector<bool> differs(base.size(), false);
  for (size_t i = 0; i < base.size(); ++i) {
    differs[i] = !agreed(base[i], alt_of, alternative);
    if (differs[i])
      for (const Node* n : base[i].nodes) sets.join(i, base.size() + alt_of.at(n));
  }
  std::vector<FusionRegion> regions;
  std::unordered_map<size_t, size_t> region_of_root;
  std::vector<bool> alt_taken(alternative.size(), false);
  for (const Node* n : g.nodes()) {  // regions in the order of their first nodes
    size_t i = base_of.at(n);
    if (!differs[i]) continue;
    auto [it, added] = region_of_root.emplace(sets.find(i), regions.size());
    if (added) regions.emplace_back();
    FusionRegion& r = regions[it->second];
    if (n == base[i].nodes.front()) r.base.push_back(base[i]);
    size_t j = alt_of.at(n);
    if (!alt_taken[j]) {
      alt_taken[j] = true;
      r.alternative.push_back(alternative[j]);
    }
  }
  return regions;
}

CombinedGrouping combine_groupings(const graph::Graph& g, const std::vector<NodeGroup>& base,
                                   const std::vector<FusionRegion>& regions, const std::vector<bool>& take) {
  TESSEL_ICHECK(take.size() == regions.size()) << "one choice per region";
  std::unordered_set<const Node*> in_regions;
  for (const FusionRegion& r : regions)
    for (const NodeGroup& group : r.base) in_regions.insert(group.nodes.begin(), group.nodes.end());
  NodeLists agreed_groups;
  for (const NodeGroup& group : base)
    if (!in_regions.count(group.nodes.front())) agreed_groups.push_back(group.nodes);

  CombinedGrouping out;
  out.alternative.assign(regions.size(), false);
  auto lists = [&](const std::vector<bool>& choice) {
    NodeLists all = agreed_groups;
    for (size_t r = 0; r < regions.size(); ++r)
      for (const NodeGroup& group : choice[r] ? regions[r].alternative : regions[r].base) all.push_back(group.nodes);
    return all;
  };
  for (size_t r = 0; r < regions.size(); ++r) {
    if (!take[r]) continue;
    out.alternative[r] = true;
    if (!fusion::acyclic_order(g, lists(out.alternative))) out.alternative[r] = false;
  }
  out.groups = fusion::named(fusion::topological_order(g, lists(out.alternative)));
  return out;
}

}  // namespace tessel::passes
