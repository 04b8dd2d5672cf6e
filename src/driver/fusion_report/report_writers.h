// The fusion report on disk: report.json (every figure, for tools),
// report.md (the tables) and report.html (the tables, a bar chart of where
// each policy's time went and the roofline with every kernel of every policy
// as a point, in inline SVG: no script, no network, opens from disk).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "src/driver/fusion_report/fusion_report.h"

namespace tessel::driver {

nlohmann::json fusion_report_json(const FusionReport& report);
std::string fusion_report_markdown(const FusionReport& report);
std::string fusion_report_html(const FusionReport& report);

// Writes the three files into dir (created); a user error naming the file
// that cannot be written.
void write_fusion_report(const FusionReport& report, const std::string& dir);

}  // namespace tessel::driver
