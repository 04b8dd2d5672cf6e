// What the importer's two files share: the checks (importer.cpp) and the
// graph import (graph_importer.cpp).
#pragma once

#include <onnx/onnx_pb.h>

#include <string>

#include "ir/graph/graph.h"
#include "src/frontend/onnx/importer.h"

namespace tessel::onnx_frontend {

bool is_default_domain(const std::string& domain);
int default_opset(const onnx::ModelProto& m);
// The IR version and every op of the model and its subgraphs; one error listing the unsupported ones.
void check_model(const onnx::ModelProto& m);
// The node against ONNX's schema of its op at the opset (counts, attribute types).
void check_onnx_schema(const onnx::NodeProto& n, int opset, graph::Attrs& attrs, const Span& span);
graph::TensorType type_from_value_info(const onnx::ValueInfoProto& vi);
// --input-shape on a declared input type.
void bind_input_shape(graph::TensorType& t, const Dims& dims, const std::string& name);

// The model's graph (checked by check_model) as a graph IR graph.
graph::Graph import_main_graph(const onnx::GraphProto& g, int opset, const std::string& model_dir,
                               const ImportOptions& options);

}  // namespace tessel::onnx_frontend
