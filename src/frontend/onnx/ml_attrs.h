// What the ai.onnx.ml adapters share (adapters_ml.cpp, adapters_ml_legacy.cpp):
// their attributes read and checked, each violation a UserError naming the node.
#pragma once

#include <string>
#include <vector>

#include "src/frontend/onnx/adapters.h"
#include "src/frontend/onnx/ml_tree_ensemble.h"

namespace tessel::onnx_frontend {

void expect_outputs(const AdaptContext& c, size_t count);
// A tensor attribute's values; empty when absent and not required.
std::vector<double> tensor_attr_values(const AdaptContext& c, const char* attr, bool required);
// A list given either as floats or as a tensor (the opset-3 "_as_tensor" form).
std::vector<double> floats_or_tensor(const AdaptContext& c, const char* attr, const std::string& as_tensor);
std::vector<int64_t> required_ints(const AdaptContext& c, const char* attr);
std::vector<std::string> required_strings(const AdaptContext& c, const char* attr);
// The attribute has as many entries as the nodes.
void expect_length(const AdaptContext& c, const char* attr, size_t got, size_t want);
// 0 <= i < size, `what` naming i in the error.
void expect_index(const AdaptContext& c, const char* what, int64_t i, size_t size);
// Input 0 as [N, features] with a static feature count.
graph::Value* features_input(AdaptContext& c, int64_t& features);
// The aggregate function and post transform as TreeEnsemble numbers them.
void expect_transform(const AdaptContext& c, TreeModel& m, int64_t aggregate, int64_t post);

void register_ml_legacy_tree_adapters(AdapterTable& t);  // TreeEnsembleRegressor, TreeEnsembleClassifier

}  // namespace tessel::onnx_frontend
