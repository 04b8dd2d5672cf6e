// Opset adapters of the nn ops.
#include "src/frontend/onnx/adapters.h"

namespace tessel::onnx_frontend {

void register_nn_adapters(AdapterTable& t) { (void)t; }

}  // namespace tessel::onnx_frontend
