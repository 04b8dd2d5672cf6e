#include "src/driver/tuned_fusion.h"

#include <iomanip>

#include "ir/core/diagnostics.h"
#include "src/driver/tuning_tasks.h"

namespace tessel::driver {

namespace {

std::string joined(const std::vector<std::string>& parts, const char* separator) {
  std::string out;
  for (const std::string& p : parts) out += (out.empty() ? "" : separator) + p;
  return out;
}

std::string group_task_key(const graph::Graph& g, const passes::NodeGroup& group, const lower::LayoutChoices& layouts) {
  return task_key(with_canonical_block_names(lower::lower_group_with_bindings(g, group, layouts).func));
}

std::string ops_of(const std::vector<passes::NodeGroup>& groups) {
  std::vector<std::string> out;
  for (const passes::NodeGroup& group : groups) {
    std::vector<std::string> ops;
    for (const graph::Node* n : group.nodes) ops.push_back(n->op);
    out.push_back(joined(ops, "+"));
  }
  return joined(out, " | ");
}

}  // namespace

std::string fusion_region_key(const std::vector<std::string>& base_tasks,
                              const std::vector<std::string>& alternative_tasks) {
  return joined(base_tasks, ",") + ">" + joined(alternative_tasks, ",");
}

std::vector<passes::NodeGroup> tuned_fusion_groups(const graph::Graph& g, const lower::LayoutChoices& layouts,
                                                   const TunedSchedules* tuned, bool take_every_region,
                                                   std::vector<FusionRegionChoice>& regions) {
  TESSEL_USER_CHECK(tuned || take_every_region, Span{})
      << "fusion tuned is decided by a tuning log: pass --tuning-log (written by tessel tune --fusion tuned)";
  std::vector<passes::NodeGroup> base = passes::make_grouping_policy(passes::FusionPolicy::kDefault)->group(g);
  std::vector<passes::NodeGroup> alternative =
      passes::make_grouping_policy(passes::FusionPolicy::kAggressive)->group(g);
  std::vector<passes::FusionRegion> found = passes::fusion_regions(g, base, alternative);
  regions.clear();
  std::vector<bool> take;
  for (const passes::FusionRegion& r : found) {
    FusionRegionChoice c;
    for (const passes::NodeGroup& group : r.base) c.base_tasks.push_back(group_task_key(g, group, layouts));
    for (const passes::NodeGroup& group : r.alternative)
      c.alternative_tasks.push_back(group_task_key(g, group, layouts));
    c.key = fusion_region_key(c.base_tasks, c.alternative_tasks);
    c.base_ops = ops_of(r.base);
    c.alternative_ops = ops_of(r.alternative);
    const FusionDecision* decision = nullptr;
    if (tuned && tuned->fusion.count(c.key)) decision = &tuned->fusion.at(c.key);
    c.decided = decision != nullptr;
    take.push_back(take_every_region || (decision && decision->take_alternative));
    regions.push_back(std::move(c));
  }
  passes::CombinedGrouping combined = passes::combine_groupings(g, base, found, take);
  for (size_t i = 0; i < regions.size(); ++i) {
    regions[i].alternative = combined.alternative[i];
    regions[i].reverted = take[i] && !combined.alternative[i];
  }
  return combined.groups;
}

void print_fusion_regions(const std::vector<FusionRegionChoice>& regions, std::ostream& out) {
  size_t taken = 0, undecided = 0, reverted = 0;
  for (const FusionRegionChoice& r : regions) {
    taken += r.alternative;
    undecided += !r.decided;
    reverted += r.reverted;
  }
  out << "fusion tuned: " << regions.size() << " regions where default and aggressive group otherwise; " << taken
      << " as aggressive, " << regions.size() - taken << " as default";
  if (undecided) out << " (" << undecided << " not in the log: default's)";
  if (reverted) out << " (" << reverted << " kept default's: aggressive's would make a cycle with another region's)";
  out << "\n";
  for (const FusionRegionChoice& r : regions)
    out << "  " << (r.alternative ? "aggressive " : "default    ") << r.base_ops << "  ->  " << r.alternative_ops
        << (r.decided ? "" : "  (undecided)") << "\n";
}

}  // namespace tessel::driver
