// Opset adapters of the elementwise ops: Clip's attributes become inputs
// (Clip-11), Cast's ONNX type number becomes a Tessel dtype name, CastLike
// becomes Cast, old Dropout loses is_test/ratio attributes and its T-typed mask.
#include "src/frontend/onnx/adapters.h"
#include "src/frontend/onnx/tensor_proto.h"

namespace tessel::onnx_frontend {

namespace {

// Canonical Cast: attribute `to` holds the Tessel dtype name ("f32", ...).
void adapt_cast(AdaptContext& c) {
  const graph::AttrValue* to = c.attrs.find("to");
  TESSEL_USER_CHECK(to != nullptr, c.span()) << "missing required attribute 'to'";
  const int64_t* onnx_type = std::get_if<int64_t>(to);
  TESSEL_USER_CHECK(onnx_type != nullptr, c.span())
      << "attribute 'to' must be an int (a TensorProto data type)";
  auto dtype = dtype_from_onnx(int(*onnx_type));
  TESSEL_USER_CHECK(dtype.has_value(), c.span())
      << "casting to " << onnx_type_name(int(*onnx_type)) << " is not supported";
  c.attrs.set("to", std::string(dtype_name(*dtype)));
}

// CastLike(x, like) = Cast(x, to = dtype of like); like's dtype is known while importing.
void adapt_cast_like(AdaptContext& c) {
  TESSEL_USER_CHECK(c.inputs.size() == 2 && c.inputs[0] && c.inputs[1], c.span())
      << "expects 2 inputs, got " << c.inputs.size();
  c.op = "Cast";
  c.attrs.set("to", std::string(dtype_name(c.inputs[1]->type.dtype)));
  c.inputs.resize(1);
}

// Clip-6 has min/max attributes; Clip-11 takes them as inputs 1 and 2.
void adapt_clip(AdaptContext& c) {
  if (c.opset >= 11 || c.inputs.empty() || c.inputs[0] == nullptr) return;
  DType dtype = c.inputs[0]->type.dtype;
  c.attr_to_input("min", 1, dtype);
  c.attr_to_input("max", 2, dtype);
}

// Dropout-12 moved ratio to an input and added training_mode; Dropout-10
// made the mask bool (before, it had the input's type).
void adapt_dropout(AdaptContext& c) {
  if (const graph::AttrValue* is_test = c.attrs.find("is_test")) {
    const int64_t* v = std::get_if<int64_t>(is_test);
    TESSEL_USER_CHECK(v != nullptr, c.span()) << "attribute 'is_test' must be an int";
    TESSEL_USER_CHECK(*v != 0, c.span())
        << "training-mode Dropout (is_test=0) drops at random, which a compiled model does not";
    c.attrs.erase("is_test");
  }
  if (c.opset >= 12) return;
  c.attr_to_input("ratio", 1, DType::kF32);
  if (c.opset >= 10 || c.output_names.size() < 2 || c.output_names[1].empty()) return;
  TESSEL_USER_CHECK(!c.inputs.empty() && c.inputs[0], c.span()) << "required input 0 is missing";
  std::vector<graph::Value*> outs = c.emit("Dropout", c.inputs, c.attrs, 2);
  graph::Attrs to;
  to.set("to", std::string(dtype_name(c.inputs[0]->type.dtype)));
  graph::Value* mask = c.emit("Cast", {outs[1]}, to)[0];
  c.results = std::vector<graph::Value*>{outs[0], mask};
}

}  // namespace

void register_elementwise_adapters(AdapterTable& t) {
  t["Cast"] = adapt_cast;
  t["BitCast"] = adapt_cast;  // its 'to' is an ONNX type number too
  t["CastLike"] = adapt_cast_like;
  t["Clip"] = adapt_clip;
  t["Dropout"] = adapt_dropout;
}

}  // namespace tessel::onnx_frontend
