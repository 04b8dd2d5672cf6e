// The policy names and the check every group must pass; the policies
// themselves are in fusion/, one per file.
#include "src/passes/fusion.h"

#include <unordered_set>

#include "ir/core/diagnostics.h"
#include "src/passes/fusion/grouping_util.h"
#include "src/passes/fusion/policies.h"

namespace tessel::passes {

using fusion::Node;
using fusion::UserMap;
using fusion::Value;

namespace {

struct PolicyName {
  FusionPolicy policy;
  std::string_view name;
};

constexpr PolicyName kPolicies[] = {{FusionPolicy::kNone, "none"},
                                    {FusionPolicy::kInjective, "injective"},
                                    {FusionPolicy::kSimple, "simple"},
                                    {FusionPolicy::kDefault, "default"},
                                    {FusionPolicy::kAggressive, "aggressive"},
                                    {FusionPolicy::kTuned, "tuned"}};

}  // namespace

GroupingPolicy::~GroupingPolicy() = default;

FusionPolicy parse_fusion_policy(std::string_view name) {
  std::string list;
  for (const PolicyName& p : kPolicies) {
    if (p.name == name) return p.policy;
    list += (list.empty() ? "" : ", ") + std::string(p.name);
  }
  TESSEL_USER_CHECK(false, Span{}) << "unknown fusion policy '" << name << "' (available: " << list << ")";
  return FusionPolicy::kNone;
}

std::string_view fusion_policy_name(FusionPolicy policy) {
  for (const PolicyName& p : kPolicies)
    if (p.policy == policy) return p.name;
  TESSEL_ICHECK(false) << "fusion policy " << int(policy) << " has no name";
  return "";
}

std::unique_ptr<GroupingPolicy> make_grouping_policy(FusionPolicy policy) {
  switch (policy) {
    case FusionPolicy::kNone: return fusion::make_no_grouping();
    case FusionPolicy::kInjective: return fusion::make_injective_grouping();
    case FusionPolicy::kSimple: return fusion::make_simple_grouping();
    case FusionPolicy::kDefault: return fusion::make_default_grouping();
    case FusionPolicy::kAggressive: return fusion::make_aggressive_grouping();
    case FusionPolicy::kTuned:
      TESSEL_USER_CHECK(false, Span{}) << "fusion tuned is decided by a tuning log: compile, run or check with "
                                          "--tuning-log (written by tessel tune --fusion tuned)";
      return nullptr;
  }
  TESSEL_ICHECK(false) << "fusion policy " << int(policy) << " has no grouping";
  return nullptr;
}

bool is_convex(const graph::Graph& g, const NodeGroup& group) {
  UserMap users = fusion::user_map(g);
  std::unordered_set<const Node*> members(group.nodes.begin(), group.nodes.end());
  // Walk downstream from the group through outside nodes only; reaching a
  // member again means a path left and re-entered.
  std::vector<const Node*> worklist;
  std::unordered_set<const Node*> seen;
  auto push_users = [&](const Node* n) {
    for (const Value* v : n->outputs) {
      auto it = v ? users.find(v) : users.end();
      if (it == users.end()) continue;
      for (const Node* u : it->second)
        if (seen.insert(u).second) worklist.push_back(u);
    }
  };
  for (const Node* n : group.nodes) push_users(n);
  while (!worklist.empty()) {
    const Node* n = worklist.back();
    worklist.pop_back();
    if (members.count(n)) continue;  // inside edges, and re-entries checked below
    push_users(n);
  }
  // A member fed by an outside node that the group reaches: a path re-enters.
  for (const Node* n : group.nodes)
    for (const Value* v : n->inputs) {
      const Node* p = v ? v->producer : nullptr;
      if (p && !members.count(p) && seen.count(p)) return false;
    }
  return true;
}

}  // namespace tessel::passes
