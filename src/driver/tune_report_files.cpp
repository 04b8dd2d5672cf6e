// tune-report's files: CSV tables and the tuning curve as an SVG plot.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <sstream>

#include "ir/core/diagnostics.h"
#include "src/driver/tune_report.h"

namespace tessel::driver {

namespace {

std::ofstream open_for_writing(const std::string& path) {
  std::ofstream out(path);
  TESSEL_USER_CHECK(out.good(), Span{}) << "cannot write " << path;
  return out;
}

// The estimated end-to-end latency after each trial (from the first at which
// every task has a time), as a polyline over labelled axes.
std::string curve_svg(const TuneReport& report) {
  std::vector<std::pair<double, double>> points;
  for (const CurvePoint& p : report.curve)
    if (p.estimated_ms > 0) points.emplace_back(p.trial, p.estimated_ms);
  constexpr double kWidth = 720, kHeight = 420, kLeft = 70, kRight = 20, kTop = 30, kBottom = 50;
  std::ostringstream svg;
  svg << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << kWidth << "\" height=\"" << kHeight
      << "\" font-family=\"sans-serif\" font-size=\"12\">\n"
      << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      << "<text x=\"" << kLeft << "\" y=\"18\">estimated end-to-end latency (ms) after each trial: " << report.log
      << "</text>\n";
  if (points.empty()) return svg.str() + "<text x=\"70\" y=\"200\">no trial with every task timed</text>\n</svg>\n";
  double x0 = points.front().first, x1 = std::max(points.back().first, x0 + 1);
  double y0 = 0, y1 = 0;
  for (const auto& p : points) y1 = std::max(y1, p.second);
  y1 *= 1.05;
  auto sx = [&](double x) { return kLeft + (x - x0) / (x1 - x0) * (kWidth - kLeft - kRight); };
  auto sy = [&](double y) { return kHeight - kBottom - (y - y0) / (y1 - y0) * (kHeight - kTop - kBottom); };
  svg << "<line x1=\"" << kLeft << "\" y1=\"" << sy(0) << "\" x2=\"" << kWidth - kRight << "\" y2=\"" << sy(0)
      << "\" stroke=\"black\"/>\n<line x1=\"" << kLeft << "\" y1=\"" << kTop << "\" x2=\"" << kLeft << "\" y2=\""
      << sy(0) << "\" stroke=\"black\"/>\n";
  for (int i = 0; i <= 4; ++i) {
    double y = y1 * i / 4, x = x0 + (x1 - x0) * i / 4;
    svg << "<text x=\"" << kLeft - 6 << "\" y=\"" << sy(y) + 4 << "\" text-anchor=\"end\">" << std::fixed
        << std::setprecision(2) << y << "</text>\n<text x=\"" << sx(x) << "\" y=\"" << kHeight - kBottom + 18
        << "\" text-anchor=\"middle\">" << std::setprecision(0) << x << "</text>\n";
  }
  svg << "<text x=\"" << (kWidth + kLeft) / 2 << "\" y=\"" << kHeight - 10 << "\" text-anchor=\"middle\">trial</text>\n"
      << "<polyline fill=\"none\" stroke=\"#1f77b4\" stroke-width=\"2\" points=\"";
  for (const auto& p : points) svg << std::setprecision(1) << sx(p.first) << "," << sy(p.second) << " ";
  svg << "\"/>\n</svg>\n";
  return svg.str();
}

std::string joined(const std::vector<std::string>& keys) {
  std::string out;
  for (const std::string& k : keys) out += (out.empty() ? "" : " ") + k;
  return out;
}

// One row per fusion tuned decision; a side's ops and task keys are lists
// (" | " between groups, spaces between keys), never commas.
void write_fusion_csv(const std::vector<tune::FusionRecord>& decisions, const std::string& path) {
  std::ofstream out = open_for_writing(path);
  out << "choice,runs,default_ms,aggressive_ms,default_ops,aggressive_ops,default_tasks,aggressive_tasks\n";
  for (const tune::FusionRecord& f : decisions)
    out << (f.take_alternative ? "aggressive" : "default") << "," << f.runs << "," << f.base_ms << ","
        << f.alternative_ms << "," << f.base_ops << "," << f.alternative_ops << "," << joined(f.base) << ","
        << joined(f.alternative) << "\n";
  out.close();
  TESSEL_USER_CHECK(out.good(), Span{}) << "cannot write " << path;
}

// One row per conv layout decision: the conv's key quoted (its pads are a
// comma-separated list), each measured layout as "form align ms", " | "
// between them.
void write_layouts_csv(const std::vector<tune::LayoutRecord>& decisions, const std::string& path) {
  std::ofstream out = open_for_writing(path);
  out << "conv,choice,default_ms,chosen_ms,measured\n";
  for (const tune::LayoutRecord& l : decisions) {
    const tune::LayoutOption& chosen = l.measured.at(l.choice);
    std::string measured;
    for (const tune::LayoutOption& o : l.measured)
      measured += (measured.empty() ? "" : " | ") + o.form + " " + std::to_string(o.align) + " " +
                  std::to_string(o.ms);
    out << '"' << l.conv << "\"," << chosen.form << " " << chosen.align << "," << l.measured.front().ms << ","
        << chosen.ms << "," << measured << "\n";
  }
  out.close();
  TESSEL_USER_CHECK(out.good(), Span{}) << "cannot write " << path;
}

// One row per decision checked in the model (its last check): a task's key
// or a conv's key (quoted) and layout, the two times in place, kept or not.
void write_checks_csv(const std::vector<tune::InModelRecord>& checks, const std::string& path) {
  std::ofstream out = open_for_writing(path);
  out << "decision,key,layout,default_ms,tuned_ms,kept\n";
  for (const tune::InModelRecord& r : checks)
    out << (r.is_layout() ? "conv,\"" + r.conv + "\"," + r.form + " " + std::to_string(r.align)
                          : "task," + r.task + ",")
        << "," << r.default_ms << "," << r.tuned_ms << "," << (r.kept ? 1 : 0) << "\n";
  out.close();
  TESSEL_USER_CHECK(out.good(), Span{}) << "cannot write " << path;
}

}  // namespace

void write_tune_report(const TuneReport& report, const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  TESSEL_USER_CHECK(!ec, Span{}) << "cannot create " << dir << ": " << ec.message();
  std::ofstream tasks = open_for_writing(dir + "/tasks.csv");
  tasks << "task,runs,flops,trials,errors,default_ms,best_ms,speedup,gflops,alternative_only\n";
  for (const TunedTask& t : report.summary.tasks) {
    double best = t.applied_ms();
    tasks << t.key << "," << t.weight << "," << t.flops << "," << t.trials << "," << t.errors << "," << t.default_ms
          << "," << best << "," << (best > 0 ? t.default_ms / best : 0) << ","
          << (best > 0 ? t.flops / (best * 1e6) : 0) << "," << (t.alternative_only ? 1 : 0) << "\n";
  }
  if (!report.summary.fusion.empty()) write_fusion_csv(report.summary.fusion, dir + "/fusion.csv");
  if (!report.summary.layouts.empty()) write_layouts_csv(report.summary.layouts, dir + "/layouts.csv");
  if (!report.checks.empty()) write_checks_csv(report.checks, dir + "/in_model.csv");
  std::ofstream curve = open_for_writing(dir + "/curve.csv");
  curve << "trial,task,ms,estimated_ms\n";
  for (const CurvePoint& p : report.curve)
    curve << p.trial << "," << p.task << "," << p.ms << "," << p.estimated_ms << "\n";
  std::ofstream accuracy = open_for_writing(dir + "/accuracy.csv");
  accuracy << "round,task,candidates,pairwise_accuracy\n";
  for (const RoundAccuracy& a : report.accuracy)
    accuracy << a.round << "," << a.task << "," << a.candidates << "," << a.accuracy << "\n";
  open_for_writing(dir + "/curve.svg") << curve_svg(report);
  for (std::ofstream* f : {&tasks, &curve, &accuracy}) {
    f->close();
    TESSEL_USER_CHECK(f->good(), Span{}) << "cannot write the report's files in " << dir;
  }
}

}  // namespace tessel::driver
