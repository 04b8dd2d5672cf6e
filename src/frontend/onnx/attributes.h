// ONNX AttributeProto -> graph attributes, with the ONNX types checked.
#pragma once

#include <string>

#include "ir/graph/attr.h"

namespace onnx {
class NodeProto;
}

namespace tessel::onnx_frontend {

// Subgraph and sparse attributes are refused with a UserError at span.
graph::Attrs convert_attributes(const onnx::NodeProto& node, const Span& span, const std::string& model_dir);

}  // namespace tessel::onnx_frontend
