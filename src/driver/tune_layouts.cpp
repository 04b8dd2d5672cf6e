#include "src/driver/tune_layouts.h"

#include <algorithm>
#include <iomanip>

#include "ir/core/diagnostics.h"
#include "src/driver/tune_session.h"
#include "src/driver/tuned_schedules.h"

namespace tessel::driver {

namespace {

// The variant's kernels' times added up (from `ms` by task), or 0 while one of them has none.
double variant_ms(const ConvLayoutVariant& v, const std::map<std::string, double>& ms) {
  double total = 0;
  for (const std::string& task : v.tasks) {
    auto it = ms.find(task);
    if (it == ms.end() || it->second <= 0) return 0;
    total += it->second;
  }
  return total;
}

}  // namespace

size_t add_layout_variants(const std::vector<CompiledKernel>& kernels, const std::vector<TuningTask>& tasks,
                           ConvLayoutVariants& variants) {
  std::vector<std::string> task_of(kernels.size());
  for (const TuningTask& t : tasks)
    for (size_t k : t.kernels) task_of.at(k) = t.key;
  // Collected per compile first: a layout met again in the same compile is
  // another instance of it, one met in an earlier compile is not new.
  ConvLayoutVariants found;
  for (size_t k = 0; k < kernels.size(); ++k)
    for (const auto& [conv, layout] : kernels[k].conv_layouts) {
      std::vector<ConvLayoutVariant>& list = found[conv];
      auto it = std::find_if(list.begin(), list.end(),
                             [&](const ConvLayoutVariant& v) { return v.layout == layout; });
      if (it == list.end()) it = list.insert(list.end(), {layout, {}});
      it->tasks.push_back(task_of[k]);
    }
  size_t added = 0;
  for (auto& [conv, list] : found)
    for (ConvLayoutVariant& v : list) {
      std::vector<ConvLayoutVariant>& known = variants[conv];
      bool listed = std::any_of(known.begin(), known.end(),
                                [&](const ConvLayoutVariant& k) { return k.layout == v.layout; });
      if (listed) continue;
      known.push_back(std::move(v));
      ++added;
    }
  return added;
}

std::vector<tune::LayoutRecord> decide_layouts(const ConvLayoutVariants& variants,
                                               const std::vector<TunedTask>& tasks, const std::string& target,
                                               const std::string& version) {
  std::map<std::string, double> applied;
  for (const TunedTask& t : tasks)
    if (t.default_ms > 0) applied[t.key] = t.applied_ms();
  std::vector<tune::LayoutRecord> out;
  for (const auto& [conv, list] : variants) {
    tune::LayoutRecord r;
    r.target = target;
    r.compiler_version = version;
    r.conv = conv;
    for (const ConvLayoutVariant& v : list) {
      double ms = variant_ms(v, applied);
      if (ms > 0)
        r.measured.push_back({lower::conv_form_name(v.layout.form), v.layout.flat_align, ms});
      else if (r.measured.empty())
        break;  // the default's kernels are not all measured yet
    }
    if (r.measured.size() < 2) continue;
    auto fastest = std::min_element(
        r.measured.begin(), r.measured.end(),
        [](const tune::LayoutOption& a, const tune::LayoutOption& b) { return a.ms < b.ms; });
    // The default's layout stays unless another is clearly faster, as a
    // default schedule stays unless a candidate is.
    if (applied_time(r.measured.front().ms, fastest->ms) == fastest->ms)
      r.choice = size_t(fastest - r.measured.begin());
    out.push_back(std::move(r));
  }
  return out;
}

std::set<std::string> hopeless_layout_tasks(const ConvLayoutVariants& variants,
                                            const std::map<std::string, double>& best_ms) {
  std::set<std::string> hopeless, hopeful;
  for (const auto& [conv, list] : variants) {
    std::vector<double> ms;
    for (const ConvLayoutVariant& v : list) ms.push_back(variant_ms(v, best_ms));
    double fastest = 0;
    for (double m : ms)
      if (m > 0 && (fastest == 0 || m < fastest)) fastest = m;
    for (size_t i = 0; i < list.size(); ++i)
      for (const std::string& task : list[i].tasks)
        (fastest > 0 && ms[i] > kHopelessLayoutRatio * fastest ? hopeless : hopeful).insert(task);
  }
  for (const std::string& task : hopeful) hopeless.erase(task);
  return hopeless;
}

void print_layout_decisions(const std::vector<tune::LayoutRecord>& decisions, std::ostream& out) {
  size_t changed = 0;
  for (const tune::LayoutRecord& r : decisions) changed += r.choice != 0;
  out << "conv layouts: " << decisions.size() << " convs measured in other layouts than the default's, "
      << changed << " changed\n";
  out << std::fixed << std::setprecision(4);
  for (const tune::LayoutRecord& r : decisions) {
    if (r.choice == 0) continue;
    const tune::LayoutOption &from = r.measured.front(), &to = r.measured[r.choice];
    out << "  " << r.conv << ": " << from.form << " " << from.align << " " << from.ms << " ms -> " << to.form
        << " " << to.align << " " << to.ms << " ms\n";
  }
  out << std::defaultfloat << std::setprecision(6);
}

std::map<std::string, lower::ConvLayout> decided_layouts(const std::vector<tune::LayoutRecord>& records) {
  std::map<std::string, lower::ConvLayout> out;
  for (const tune::LayoutRecord& r : records) {
    const tune::LayoutOption& chosen = r.measured.at(r.choice);
    std::optional<lower::ConvForm> form = lower::conv_form_named(chosen.form);
    TESSEL_USER_CHECK(form.has_value(), Span{})
        << "the tuning log's layout decision for " << r.conv << " names the form '" << chosen.form
        << "', which this compiler does not know";
    out[r.conv] = {*form, chosen.align};
  }
  return out;
}

}  // namespace tessel::driver
