// An ONNX value as the import holds it: a tensor, a sequence of tensors or an
// optional. Sequences and optionals live only while importing: the import
// decides their structure (how many elements a sequence has, whether an
// optional holds something) from the model and, for graph inputs, from
// ImportOptions; the graph IR sees only the tensors inside them.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "ir/graph/graph.h"

namespace tessel::onnx_frontend {

struct OnnxValue {
  enum class Kind { kTensor, kSequence, kOptional };
  Kind kind = Kind::kTensor;
  graph::Value* tensor = nullptr;            // kTensor (null: an omitted input)
  std::vector<graph::Value*> elements;       // kSequence
  DType element_dtype = DType::kF32;         // kSequence, kept for an empty one
  std::shared_ptr<const OnnxValue> content;  // kOptional: null when empty

  static OnnxValue of(graph::Value* t) { return OnnxValue{Kind::kTensor, t, {}, DType::kF32, nullptr}; }
  static OnnxValue sequence(std::vector<graph::Value*> elements, DType dtype) {
    return OnnxValue{Kind::kSequence, nullptr, std::move(elements), dtype, nullptr};
  }
  // An optional holding `held` (a tensor or a sequence), or an empty one.
  static OnnxValue optional(const OnnxValue* held) {
    OnnxValue v{Kind::kOptional, nullptr, {}, DType::kF32, nullptr};
    if (held) v.content = std::make_shared<const OnnxValue>(*held);
    return v;
  }

  bool is_tensor() const { return kind == Kind::kTensor; }
  // Whether it holds anything at all: not an omitted input (an empty
  // optional is given, and holds nothing).
  bool given() const { return !is_tensor() || tensor != nullptr; }
  bool is_sequence() const { return kind == Kind::kSequence; }
  bool is_optional() const { return kind == Kind::kOptional; }
  // "a tensor", "a sequence of 3 float32 tensors", "an empty optional", ...
  std::string describe() const;
  // The tensors inside, in order: a tensor itself, a sequence's elements, an
  // optional's content (none when empty).
  std::vector<graph::Value*> tensors() const;
  // The graph-IR name of each of tensors() as a graph input or output named
  // `name`: a tensor and an optional's tensor keep it, sequence element k is
  // "name[k]".
  std::vector<std::string> tensor_names(const std::string& name) const;
};

}  // namespace tessel::onnx_frontend
