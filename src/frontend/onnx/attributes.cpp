// Attribute conversion. Old models may leave AttributeProto.type unset; the
// populated field then says what the attribute is.
#include "src/frontend/onnx/attributes.h"

#include <onnx/onnx_pb.h>

#include "src/frontend/onnx/tensor_proto.h"

namespace tessel::onnx_frontend {

namespace {

onnx::AttributeProto::AttributeType effective_type(const onnx::AttributeProto& a) {
  if (a.type() != onnx::AttributeProto::UNDEFINED) return a.type();
  if (a.has_f()) return onnx::AttributeProto::FLOAT;
  if (a.has_i()) return onnx::AttributeProto::INT;
  if (a.has_s()) return onnx::AttributeProto::STRING;
  if (a.has_t()) return onnx::AttributeProto::TENSOR;
  if (a.has_g()) return onnx::AttributeProto::GRAPH;
  if (a.floats_size()) return onnx::AttributeProto::FLOATS;
  if (a.ints_size()) return onnx::AttributeProto::INTS;
  if (a.strings_size()) return onnx::AttributeProto::STRINGS;
  return onnx::AttributeProto::UNDEFINED;
}

}  // namespace

graph::Attrs convert_attributes(const onnx::NodeProto& node, const Span& span, const std::string& model_dir) {
  graph::Attrs attrs;
  for (const onnx::AttributeProto& a : node.attribute()) {
    TESSEL_USER_CHECK(!a.name().empty(), span) << "has an attribute without a name";
    TESSEL_USER_CHECK(a.ref_attr_name().empty(), span)
        << "attribute '" << a.name() << "' refers to a function attribute, which is not supported";
    switch (effective_type(a)) {
      case onnx::AttributeProto::FLOAT: attrs.set(a.name(), double(a.f())); break;
      case onnx::AttributeProto::INT: attrs.set(a.name(), int64_t(a.i())); break;
      case onnx::AttributeProto::STRING: attrs.set(a.name(), a.s()); break;
      case onnx::AttributeProto::TENSOR: attrs.set(a.name(), tensor_from_proto(a.t(), model_dir)); break;
      case onnx::AttributeProto::FLOATS:
        attrs.set(a.name(), std::vector<double>(a.floats().begin(), a.floats().end()));
        break;
      case onnx::AttributeProto::INTS:
        attrs.set(a.name(), std::vector<int64_t>(a.ints().begin(), a.ints().end()));
        break;
      case onnx::AttributeProto::STRINGS:
        attrs.set(a.name(), std::vector<std::string>(a.strings().begin(), a.strings().end()));
        break;
      case onnx::AttributeProto::GRAPH:
        // A subgraph of control flow: its adapter imports it (AdaptContext::import_subgraph).
        TESSEL_USER_CHECK(node.op_type() == "If" || node.op_type() == "Loop" || node.op_type() == "Scan" ||
                              node.op_type() == "FlexAttention" || node.op_type() == "SequenceMap",
                          span)
            << "attribute '" << a.name() << "' has an unsupported type GRAPH";
        break;
      case onnx::AttributeProto::TYPE_PROTO:
        // Optional's type says what an empty optional would hold; the import
        // keeps no type for one (what it holds is decided while compiling).
        TESSEL_USER_CHECK(node.op_type() == "Optional", span)
            << "attribute '" << a.name() << "' has an unsupported type TYPE_PROTO";
        break;
      case onnx::AttributeProto::UNDEFINED:
        // An empty list attribute has no populated field: ints is the common case.
        attrs.set(a.name(), std::vector<int64_t>{});
        break;
      default:
        TESSEL_USER_ERROR(span) << "attribute '" << a.name() << "' has an unsupported type "
                                << onnx::AttributeProto::AttributeType_Name(a.type());
    }
  }
  return attrs;
}

}  // namespace tessel::onnx_frontend
