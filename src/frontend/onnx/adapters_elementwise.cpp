// Opset adapters of the elementwise ops.
#include "src/frontend/onnx/adapters.h"

namespace tessel::onnx_frontend {

void register_elementwise_adapters(AdapterTable& t) { (void)t; }

}  // namespace tessel::onnx_frontend
