// Opset adapters of the data-movement ops.
#include "src/frontend/onnx/adapters.h"

namespace tessel::onnx_frontend {

void register_movement_adapters(AdapterTable& t) { (void)t; }

}  // namespace tessel::onnx_frontend
