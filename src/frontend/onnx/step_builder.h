// The body of a Scan an adapter builds step by step (a recurrent cell, a
// linear-attention state update), in a graph of its own: values the outer
// graph computes are captured as extra body inputs, constants copied in.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "src/frontend/onnx/adapters.h"

namespace tessel::onnx_frontend {

class StepBuilder {
 public:
  StepBuilder(AdaptContext& outer, std::shared_ptr<graph::Graph> body)
      : body_(std::move(body)), b_{*body_, outer.opset, outer.fold_constants, outer.op, outer.name, {},
                                   {},     {}} {}

  AdaptContext& b() { return b_; }
  graph::Value* input(const std::string& name, const graph::TensorType& type) {
    return body_->add_input(name, type);
  }
  // The outer value as seen inside the body; null stays null.
  graph::Value* capture(graph::Value* outer) {
    if (!outer) return nullptr;
    if (outer->is_constant()) return body_->add_constant(body_->unique_name(outer->name), *outer->constant);
    captured_.push_back(outer);
    return body_->add_input(body_->unique_name(outer->name), outer->type);
  }
  // The outer values captured, in the order of their body inputs (after the
  // states and scan inputs: the Scan node's last inputs).
  const std::vector<graph::Value*>& captured() const { return captured_; }
  graph::Value* add(graph::Value* x, graph::Value* y) { return y ? b_.emit("Add", {x, y})[0] : x; }
  graph::Value* mul(graph::Value* x, graph::Value* y) { return b_.emit("Mul", {x, y})[0]; }

 private:
  std::shared_ptr<graph::Graph> body_;
  AdaptContext b_;
  std::vector<graph::Value*> captured_;
};

}  // namespace tessel::onnx_frontend
