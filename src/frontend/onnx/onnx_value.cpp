#include "src/frontend/onnx/onnx_value.h"

namespace tessel::onnx_frontend {

std::string OnnxValue::describe() const {
  switch (kind) {
    case Kind::kTensor: return "a tensor";
    case Kind::kSequence:
      return "a sequence of " + std::to_string(elements.size()) + " " +
             std::string(dtype_name(element_dtype)) + " tensors";
    case Kind::kOptional: return content ? "an optional holding " + content->describe() : "an empty optional";
  }
  return "";
}

std::vector<graph::Value*> OnnxValue::tensors() const {
  switch (kind) {
    case Kind::kTensor: return {tensor};
    case Kind::kSequence: return elements;
    case Kind::kOptional: return content ? content->tensors() : std::vector<graph::Value*>{};
  }
  return {};
}

std::vector<std::string> OnnxValue::tensor_names(const std::string& name) const {
  if (kind == Kind::kOptional) return content ? content->tensor_names(name) : std::vector<std::string>{};
  if (kind == Kind::kTensor) return {name};
  std::vector<std::string> names;
  for (size_t k = 0; k < elements.size(); ++k) names.push_back(name + "[" + std::to_string(k) + "]");
  return names;
}

}  // namespace tessel::onnx_frontend
