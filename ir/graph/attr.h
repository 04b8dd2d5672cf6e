// Node attributes: a small typed map from name to value.
#pragma once

#include <map>
#include <string>
#include <variant>
#include <vector>

#include "ir/core/diagnostics.h"
#include "ir/core/tensor.h"

namespace tessel::graph {

enum class AttrType { kInt, kFloat, kString, kInts, kFloats, kStrings, kTensor };
std::string_view attr_type_name(AttrType t);

// Alternatives in AttrType order.
using AttrValue = std::variant<int64_t, double, std::string, std::vector<int64_t>,
                               std::vector<double>, std::vector<std::string>, Tensor>;

inline AttrType attr_type_of(const AttrValue& v) { return AttrType(v.index()); }
std::string attr_value_str(const AttrValue& v);

class Attrs {
 public:
  bool has(const std::string& name) const { return values_.count(name) != 0; }
  void set(const std::string& name, AttrValue v) { values_[name] = std::move(v); }
  void erase(const std::string& name) { values_.erase(name); }
  const AttrValue* find(const std::string& name) const;
  const std::map<std::string, AttrValue>& all() const { return values_; }
  bool empty() const { return values_.empty(); }

  // Typed access. The schema has checked types and filled defaults before any
  // shape function or kernel reads them, so a wrong type here is internal.
  int64_t get_int(const std::string& name) const { return get<int64_t>(name); }
  double get_float(const std::string& name) const { return get<double>(name); }
  const std::string& get_string(const std::string& name) const { return get<std::string>(name); }
  const std::vector<int64_t>& get_ints(const std::string& name) const {
    return get<std::vector<int64_t>>(name);
  }
  const std::vector<double>& get_floats(const std::string& name) const {
    return get<std::vector<double>>(name);
  }
  const Tensor& get_tensor(const std::string& name) const { return get<Tensor>(name); }

 private:
  template <typename T>
  const T& get(const std::string& name) const {
    const AttrValue* v = find(name);
    TESSEL_ICHECK(v != nullptr) << "attribute '" << name << "' is not set";
    TESSEL_ICHECK(std::holds_alternative<T>(*v)) << "attribute '" << name << "' has another type";
    return std::get<T>(*v);
  }
  std::map<std::string, AttrValue> values_;
};

}  // namespace tessel::graph
