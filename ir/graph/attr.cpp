// Attribute names and printed forms.
#include "ir/graph/attr.h"

#include <sstream>

namespace tessel::graph {

std::string_view attr_type_name(AttrType t) {
  switch (t) {
    case AttrType::kInt: return "int";
    case AttrType::kFloat: return "float";
    case AttrType::kString: return "string";
    case AttrType::kInts: return "ints";
    case AttrType::kFloats: return "floats";
    case AttrType::kStrings: return "strings";
    case AttrType::kTensor: return "tensor";
  }
  return "?";
}

const AttrValue* Attrs::find(const std::string& name) const {
  auto it = values_.find(name);
  return it == values_.end() ? nullptr : &it->second;
}

std::string attr_value_str(const AttrValue& v) {
  std::ostringstream os;
  auto list = [&](const auto& xs, auto fmt) {
    os << "[";
    for (size_t i = 0; i < xs.size(); ++i) {
      if (i) os << ", ";
      fmt(xs[i]);
    }
    os << "]";
  };
  switch (attr_type_of(v)) {
    case AttrType::kInt: os << std::get<int64_t>(v); break;
    case AttrType::kFloat: os << std::get<double>(v); break;
    case AttrType::kString: os << '"' << std::get<std::string>(v) << '"'; break;
    case AttrType::kInts: list(std::get<std::vector<int64_t>>(v), [&](int64_t x) { os << x; }); break;
    case AttrType::kFloats: list(std::get<std::vector<double>>(v), [&](double x) { os << x; }); break;
    case AttrType::kStrings:
      list(std::get<std::vector<std::string>>(v), [&](const std::string& x) { os << '"' << x << '"'; });
      break;
    case AttrType::kTensor: os << "tensor " << std::get<Tensor>(v).type_str(); break;
  }
  return os.str();
}

}  // namespace tessel::graph
