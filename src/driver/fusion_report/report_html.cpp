// report.html: one page, inline CSS and SVG only. A bar per policy (time in
// kernels and outside them) and a log-log roofline with every kernel of
// every policy as a point (hover: name, ops, figures).
#include <algorithm>
#include <cmath>
#include <sstream>

#include "src/driver/fusion_report/report_text.h"
#include "src/driver/fusion_report/report_writers.h"

namespace tessel::driver {

namespace {

const char* kColors[] = {"#7f7f7f", "#1f77b4", "#2ca02c", "#d62728", "#9467bd", "#ff7f0e"};

std::string escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

const char* color(size_t i) { return kColors[i % (sizeof kColors / sizeof kColors[0])]; }

void time_bars(const FusionReport& r, std::ostringstream& h) {
  double longest = 0;
  for (const PolicyReport& p : r.policies) longest = std::max({longest, p.end_to_end.median_ms, p.kernel_sum_ms});
  int row = 34, width = 480;
  h << "<svg id=\"time-bars\" width=\"800\" height=\"" << 40 + row * int(r.policies.size())
    << "\" role=\"img\"><title>end-to-end time per policy</title>\n";
  for (size_t i = 0; i < r.policies.size(); ++i) {
    const PolicyReport& p = r.policies[i];
    double scale = longest > 0 ? width / longest : 0;
    int y = 10 + row * int(i);
    double in = p.kernel_sum_ms, out = std::max(0.0, p.outside_kernels_ms());
    double spread = std::max(0.0, p.end_to_end.median_ms - in - out);
    auto bar = [&](double from, double ms, const char* fill, const std::string& title) {
      h << "<rect x=\"" << fixed(100 + from * scale, 1) << "\" y=\"" << y << "\" width=\"" << fixed(ms * scale, 1)
        << "\" height=\"24\" fill=\"" << fill << "\"><title>" << title << "</title></rect>";
    };
    h << "<text x=\"0\" y=\"" << y + 17 << "\">" << escape(p.policy) << "</text>";
    bar(0, in, color(i), "kernels (their medians) " + fixed(in, 3) + " ms");
    bar(in, out, "#999999", "outside kernels " + fixed(out, 3) + " ms");
    bar(in + out, spread, "#dddddd", "run-to-run spread " + fixed(spread, 3) + " ms");
    h << "<text x=\"" << fixed(110 + std::max(in + out + spread, p.end_to_end.median_ms) * scale, 1) << "\" y=\""
      << y + 17 << "\">" << fixed(p.end_to_end.median_ms, 3) << " ms, " << p.kernels.size() << " kernels</text>\n";
  }
  h << "<text x=\"100\" y=\"" << 30 + row * int(r.policies.size())
    << "\">colour: the kernels' medians; grey: outside kernels; light: the rest of the median run</text></svg>\n";
}

struct LogAxis {
  double lo, hi, pixels, offset;
  bool flip;
  double at(double v) const {
    double t = (std::log10(std::max(v, lo)) - std::log10(lo)) / (std::log10(hi) - std::log10(lo));
    return offset + (flip ? (1 - t) : t) * pixels;
  }
};

void roofline_plot(const FusionReport& r, std::ostringstream& h) {
  double peak = std::max(r.roof.gflops, 1e-3);
  LogAxis x{1e-2, 1e3, 600, 60, false}, y{std::max(peak / 1e5, 1e-4), peak * 4, 380, 20, true};
  h << "<svg id=\"roofline\" width=\"800\" height=\"460\" role=\"img\"><title>roofline</title>\n"
    << "<rect x=\"60\" y=\"20\" width=\"600\" height=\"380\" fill=\"none\" stroke=\"#444\"/>\n";
  for (double v = 1e-2; v <= 1e3 * 1.01; v *= 10)
    h << "<text x=\"" << fixed(x.at(v) - 10, 1) << "\" y=\"418\" font-size=\"11\">" << v << "</text>";
  for (double v = std::pow(10, std::ceil(std::log10(y.lo))); v <= y.hi; v *= 10)
    h << "<text x=\"0\" y=\"" << fixed(y.at(v) + 4, 1) << "\" font-size=\"11\">" << v << "</text>";
  h << "<text x=\"280\" y=\"440\">FLOP per byte</text><text x=\"0\" y=\"12\">GFLOP/s</text>\n";
  std::string roof;
  for (int i = 0; i <= 100; ++i) {
    double ai = std::pow(10, -2 + 5.0 * i / 100);
    roof += (i ? " " : "") + fixed(x.at(ai), 1) + "," + fixed(y.at(std::min(peak, ai * r.roof.gbps)), 1);
  }
  h << "<polyline points=\"" << roof << "\" fill=\"none\" stroke=\"#000\" stroke-width=\"2\"/>\n";
  std::string cache_roof;
  for (int i = 0; i <= 100 && r.roof.cache_gbps > 0; ++i) {
    double ai = std::pow(10, -2 + 5.0 * i / 100);
    cache_roof += (i ? " " : "") + fixed(x.at(ai), 1) + "," + fixed(y.at(std::min(peak, ai * r.roof.cache_gbps)), 1);
  }
  if (!cache_roof.empty())
    h << "<polyline points=\"" << cache_roof << "\" fill=\"none\" stroke=\"#888\" stroke-dasharray=\"6,4\"/>"
      << "<text x=\"500\" y=\"395\" font-size=\"11\">solid: main memory; dashed: L2 cache</text>\n";
  for (size_t i = 0; i < r.policies.size(); ++i)
    for (const ReportKernel& k : r.policies[i].kernels) {
      if (k.flops <= 0 || k.bytes <= 0 || k.median_ms <= 0) continue;
      h << "<circle cx=\"" << fixed(x.at(k.place.intensity), 1) << "\" cy=\"" << fixed(y.at(k.gflops()), 1)
        << "\" r=\"4\" fill=\"" << color(i) << "\" fill-opacity=\"0.6\"><title>" << escape(r.policies[i].policy)
        << ": " << escape(k.name) << " (" << escape(k.ops) << ") " << fixed(k.median_ms, 4) << " ms, "
        << fixed(k.gflops(), 2) << " GFLOP/s, " << fixed(k.place.percent, 1) << "% of the roof</title></circle>\n";
    }
  for (size_t i = 0; i < r.policies.size(); ++i)
    h << "<circle cx=\"690\" cy=\"" << 40 + 20 * i << "\" r=\"5\" fill=\"" << color(i) << "\"/><text x=\"700\" y=\""
      << 44 + 20 * i << "\">" << escape(r.policies[i].policy) << "</text>\n";
  h << "</svg>\n";
}

std::string markdown_tables_as_html(const std::string& md) {
  std::istringstream in(md);
  std::ostringstream h;
  bool table = false;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("|", 0) == 0) {
      if (line.find("---") != std::string::npos) continue;
      if (!table) h << "<table>\n";
      table = true;
      h << "<tr>";
      std::istringstream cells(line.substr(1));
      for (std::string cell; std::getline(cells, cell, '|');) h << "<td>" << escape(cell) << "</td>";
      h << "</tr>\n";
      continue;
    }
    if (table) h << "</table>\n";
    table = false;
    if (line.rfind("## ", 0) == 0) h << "<h2>" << escape(line.substr(3)) << "</h2>\n";
    else if (line.rfind("# ", 0) == 0) continue;
    else if (line.rfind("- ", 0) == 0) h << "<p>" << escape(line.substr(2)) << "</p>\n";
    else if (!line.empty()) h << "<p>" << escape(line) << "</p>\n";
  }
  if (table) h << "</table>\n";
  return h.str();
}

}  // namespace

std::string fusion_report_html(const FusionReport& r) {
  std::ostringstream h;
  h << "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>Fusion report: " << escape(r.model)
    << "</title>\n<style>body{font-family:sans-serif;margin:2em;max-width:1200px}"
       "table{border-collapse:collapse;margin:1em 0}td{border:1px solid #ccc;padding:2px 6px;font-size:13px}"
       "tr:first-child td{font-weight:bold;background:#f0f0f0}svg text{font-size:13px}</style></head><body>\n"
    << "<h1>Fusion report: " << escape(r.model) << "</h1>\n<h2>Where the time went</h2>\n";
  time_bars(r, h);
  h << "<h2>Every kernel on this machine's roofline</h2>\n";
  roofline_plot(r, h);
  h << markdown_tables_as_html(fusion_report_markdown(r)) << "</body></html>\n";
  return h.str();
}

}  // namespace tessel::driver
