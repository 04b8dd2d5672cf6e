// Opset adapters of the shape ops.
#include "src/frontend/onnx/adapters.h"

namespace tessel::onnx_frontend {

void register_shape_adapters(AdapterTable& t) { (void)t; }

}  // namespace tessel::onnx_frontend
