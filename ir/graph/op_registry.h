// The op registry: for every graph op, its attribute schema, its shape and type
// function, its op pattern (which later fusion depends on) and its FLOP count.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ir/graph/graph.h"

namespace tessel::graph {

// How an op may fuse (TVM's op patterns, in order of increasing restriction).
enum class OpPattern { kElemwise, kBroadcast, kInjective, kReduce, kOutElemwiseFusable, kOpaque };
std::string_view op_pattern_name(OpPattern p);

struct AttrSpec {
  std::string name;
  AttrType type;
  std::optional<AttrValue> default_value;  // nullopt: required
};

// What a shape function sees: input types, the constant value of each input
// where one is known (the reference executor knows them all), attributes.
class InferContext {
 public:
  InferContext(const Node& node, std::vector<const TensorType*> types,
               std::vector<const Tensor*> values);

  const Node& node() const { return node_; }
  const Attrs& attrs() const { return node_.attrs; }
  Span span() const { return node_.span(); }
  size_t num_inputs() const { return types_.size(); }
  size_t num_outputs() const { return node_.outputs.size(); }
  bool has_input(size_t i) const { return i < types_.size() && types_[i] != nullptr; }
  const TensorType& input(size_t i) const;
  // The constant value of input i, or null when it is only known at run time.
  const Tensor* value(size_t i) const { return i < values_.size() ? values_[i] : nullptr; }
  // Input i as a list of integers when it is constant (axes, pads, shapes).
  std::optional<std::vector<int64_t>> int_values(size_t i) const;

  void set_output(size_t i, TensorType type);
  // An output whose value is known while compiling (Shape of a static tensor).
  void set_output_value(size_t i, Tensor value);

  std::vector<TensorType> output_types;
  std::vector<std::optional<Tensor>> output_values;

 private:
  const Node& node_;
  std::vector<const TensorType*> types_;
  std::vector<const Tensor*> values_;
};

using InferFn = std::function<void(InferContext&)>;
// FLOPs of one node whose types are inferred (multiply-add counts two).
using FlopsFn = std::function<int64_t(const Node&)>;

struct OpSchema {
  std::string name;
  OpPattern pattern = OpPattern::kOpaque;
  int min_inputs = 0, max_inputs = 0;
  int min_outputs = 1, max_outputs = 1;
  std::vector<AttrSpec> attrs;
  InferFn infer;
  FlopsFn flops;  // null: no arithmetic worth counting (data movement)

  const AttrSpec* find_attr(const std::string& attr) const;
  // Checks input/output counts and attribute names and types, fills defaults.
  // A violation is a UserError naming the node.
  void validate(Node& node) const;
};

// Fluent definition of a schema inside the per-family registration files.
class OpDef {
 public:
  explicit OpDef(OpSchema& s) : s_(s) {}
  OpDef& inputs(int min, int max) { s_.min_inputs = min; s_.max_inputs = max; return *this; }
  OpDef& inputs(int n) { return inputs(n, n); }
  OpDef& outputs(int min, int max) { s_.min_outputs = min; s_.max_outputs = max; return *this; }
  OpDef& outputs(int n) { return outputs(n, n); }
  // Out of line: inlined at every call site, GCC 12 warns falsely about the
  // optional variant (-Wmaybe-uninitialized).
  OpDef& attr(std::string name, AttrType type, std::optional<AttrValue> def = std::nullopt);
  OpDef& infer(InferFn f) { s_.infer = std::move(f); return *this; }
  OpDef& flops(FlopsFn f) { s_.flops = std::move(f); return *this; }

 private:
  OpSchema& s_;
};

class OpRegistry {
 public:
  // The registry of every op Tessel supports, built once.
  static const OpRegistry& global();

  OpDef def(const std::string& name, OpPattern pattern);
  const OpSchema* find(const std::string& name) const;
  std::vector<std::string> names() const;

 private:
  std::map<std::string, OpSchema> schemas_;
};

// Runs the schema check and the shape function of one node; writes the
// inferred types (and values, where known) to the node's outputs.
void infer_node(Node& node);

// Runs the shape function of a validated node on its inputs' current types
// and constant values, without changing the node.
InferContext run_shape_function(const Node& node);

// FLOPs of a node whose types are inferred; 0 for ops without a FLOP count.
int64_t node_flops(const Node& node);

// The node's op pattern (what fusion and lowering decide by); kOpaque for an
// op the registry does not know.
OpPattern pattern_of(const Node& node);

}  // namespace tessel::graph
