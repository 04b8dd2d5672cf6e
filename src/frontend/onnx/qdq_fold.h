// QDQ models (the format ONNX Runtime's quantizer writes) as integer kernels.
// A QDQ model keeps float ops between DequantizeLinear and QuantizeLinear
// pairs; where a Conv or MatMul reads 8-bit values through DequantizeLinear
// and its result is quantized again, the three steps are one integer
// product, rewritten here to the QLinearConv or QLinearMatMul ONNX defines
// for it (which import to int32 products with int32 accumulation):
//
//   before: x_f = DequantizeLinear(x_q, sx, zx)   w_f = DequantizeLinear(w_q, sw, zw)
//           b_f = DequantizeLinear(b_i32, sx*sw)   y_f = Conv(x_f, w_f, b_f)
//           [y_f = Relu(y_f)]                      y_q = QuantizeLinear(y_f, sy, zy)
//   after:  y_q = QLinearConv(x_q, sx, zx, w_q, sw, zw, sy, zy, b_i32)  [then Max(y_q, zy)]
//
// In exact arithmetic both compute the same; the float path's rounding can
// put a value on the other side of a rounding boundary, so an output may
// differ by one quantization step. The pattern must match exactly (8-bit
// per-tensor activations, per-tensor or per-channel weights, an int32 bias
// whose scale is sx * sw, scales and zero points stored in the model, the
// intermediate values read by nothing else); anything else keeps its float
// ops. DequantizeLinear nodes left without readers are removed later as dead
// code.
#pragma once

#include <string>

namespace onnx {
class GraphProto;
}

namespace tessel::onnx_frontend {

// Rewrites `graph` (not its subgraphs) in place; `opset` is the model's
// default-domain opset, `model_dir` where external data is read from.
void fold_qdq(onnx::GraphProto& graph, int opset, const std::string& model_dir);

// Whether the graph has a QuantizeLinear node (a QDQ model may).
bool has_quantize_linear(const onnx::GraphProto& graph);

}  // namespace tessel::onnx_frontend
