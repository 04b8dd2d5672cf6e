// Opset adapters of the shape ops: before Squeeze-13 / Unsqueeze-13, `axes`
// was an attribute; it becomes input 1. Reshape (shape an input since 5),
// Shape-15's start/end and the others need no change; a scalar Unsqueeze axis
// becomes a list of one.
#include "src/frontend/onnx/adapters.h"

namespace tessel::onnx_frontend {

void register_shape_adapters(AdapterTable& t) {
  t["Squeeze"] = [](AdaptContext& c) {
    if (c.opset < 13) c.attr_to_input("axes", 1);
  };
  t["Unsqueeze"] = [](AdaptContext& c) {
    // ONNX's own function bodies (AffineGrid's) give one axis as a scalar; read it as a list of one.
    graph::Value* axes = c.input_or_null(1);
    if (c.opset >= 13 && axes && axes->type.rank_known && axes->type.rank() == 0)
      c.set_input(1, c.emit("Reshape", {axes, c.i64_vector({1})})[0]);
    if (c.opset >= 13) return;
    TESSEL_USER_CHECK(c.attrs.has("axes"), c.span()) << "missing required attribute 'axes'";
    c.attr_to_input("axes", 1);
  };
}

}  // namespace tessel::onnx_frontend
