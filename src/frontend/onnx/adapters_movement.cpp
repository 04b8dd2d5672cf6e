// Opset adapters of the data-movement ops: attributes that later opsets turned
// into inputs (Split-2/11's split, Slice-1's starts/ends/axes, Pad-2's pads
// and value), and Scatter-9's rename to ScatterElements.
#include "src/frontend/onnx/adapters.h"

namespace tessel::onnx_frontend {

void register_movement_adapters(AdapterTable& t) {
  t["Split"] = [](AdaptContext& c) {
    if (c.opset < 13) c.attr_to_input("split", 1);
  };
  t["Slice"] = [](AdaptContext& c) {
    if (c.opset >= 10) return;
    TESSEL_USER_CHECK(c.attrs.has("starts") && c.attrs.has("ends"), c.span())
        << "Slice-1 needs the 'starts' and 'ends' attributes";
    c.attr_to_input("starts", 1);
    c.attr_to_input("ends", 2);
    c.attr_to_input("axes", 3);
  };
  // Scatter-9 is ScatterElements-11 without negative indices or reduction.
  t["Scatter"] = [](AdaptContext& c) { c.op = "ScatterElements"; };
  t["Pad"] = [](AdaptContext& c) {
    if (c.opset >= 11) return;
    TESSEL_USER_CHECK(c.attrs.has("pads"), c.span()) << "Pad-2 needs the 'pads' attribute";
    TESSEL_USER_CHECK(!c.inputs.empty() && c.inputs[0] != nullptr, c.span()) << "missing input 0";
    c.attr_to_input("pads", 1);
    c.attr_to_input("value", 2, c.inputs[0]->type.dtype);
  };
}

}  // namespace tessel::onnx_frontend
