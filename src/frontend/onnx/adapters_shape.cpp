// Opset adapters of the shape ops: before Squeeze-13 / Unsqueeze-13, `axes`
// was an attribute; it becomes input 1. Reshape (shape an input since 5),
// Shape-15's start/end and the others need no change.
#include "src/frontend/onnx/adapters.h"

namespace tessel::onnx_frontend {

void register_shape_adapters(AdapterTable& t) {
  t["Squeeze"] = [](AdaptContext& c) {
    if (c.opset < 13) c.attr_to_input("axes", 1);
  };
  t["Unsqueeze"] = [](AdaptContext& c) {
    if (c.opset >= 13) return;
    TESSEL_USER_CHECK(c.attrs.has("axes"), c.span()) << "missing required attribute 'axes'";
    c.attr_to_input("axes", 1);
  };
}

}  // namespace tessel::onnx_frontend
