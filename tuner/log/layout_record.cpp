// The layout decision's line of the tuning log (tuning_log.h).
#include <nlohmann/json.hpp>

#include "ir/core/diagnostics.h"
#include "tuner/log/tuning_log.h"

namespace tessel::tune {

namespace {

using nlohmann::json;

std::string string_field(const json& j, const char* key) {
  TESSEL_USER_CHECK(j.contains(key) && j[key].is_string() && !j[key].get<std::string>().empty(), Span{})
      << "field \"" << key << "\" is not a string";
  return j[key].get<std::string>();
}

LayoutOption option_from_json(const json& j) {
  TESSEL_USER_CHECK(j.is_object(), Span{}) << "a measured layout that is not an object";
  LayoutOption o;
  o.form = string_field(j, "form");
  TESSEL_USER_CHECK(j.contains("align") && j["align"].is_number_integer() && j["align"].get<int64_t>() >= 1,
                    Span{})
      << "a measured layout's \"align\" is not an integer of at least 1";
  o.align = j["align"].get<int64_t>();
  TESSEL_USER_CHECK(j.contains("ms") && j["ms"].is_number() && j["ms"].get<double>() > 0, Span{})
      << "a measured layout's \"ms\" is not a positive number";
  o.ms = j["ms"].get<double>();
  return o;
}

}  // namespace

std::string to_line(const LayoutRecord& r) {
  json measured = json::array();
  for (const LayoutOption& o : r.measured)
    measured.push_back({{"form", o.form}, {"align", o.align}, {"ms", o.ms}});
  json layout = {{"conv", r.conv}, {"choice", r.choice}, {"measured", measured}};
  return json{{"layout", layout}, {"target", r.target}, {"version", r.compiler_version}}.dump();
}

LayoutRecord layout_record_from_line(const std::string& line) {
  json j = json::parse(line, nullptr, /*allow_exceptions=*/false);
  TESSEL_USER_CHECK(!j.is_discarded() && j.is_object(), Span{}) << "not a JSON object";
  TESSEL_USER_CHECK(j.contains("layout") && j["layout"].is_object(), Span{}) << "not a layout decision";
  LayoutRecord r;
  r.target = string_field(j, "target");
  r.compiler_version = string_field(j, "version");
  const json& l = j["layout"];
  r.conv = string_field(l, "conv");
  TESSEL_USER_CHECK(l.contains("measured") && l["measured"].is_array() && l["measured"].size() >= 2, Span{})
      << "field \"measured\" is not a list of at least two layouts";
  for (const json& o : l["measured"]) r.measured.push_back(option_from_json(o));
  TESSEL_USER_CHECK(l.contains("choice") && l["choice"].is_number_unsigned() &&
                        l["choice"].get<size_t>() < r.measured.size(),
                    Span{})
      << "field \"choice\" is not the index of a measured layout";
  r.choice = l["choice"].get<size_t>();
  return r;
}

}  // namespace tessel::tune
