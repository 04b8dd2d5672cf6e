// Opset adapters of the reduce ops.
#include "src/frontend/onnx/adapters.h"

namespace tessel::onnx_frontend {

void register_reduce_adapters(AdapterTable& t) { (void)t; }

}  // namespace tessel::onnx_frontend
