// ONNX TensorProto <-> Tensor: typed and raw data, external data files (kept
// inside the model's folder), and the serialised .pb files of test data.
#pragma once

#include <optional>
#include <string>

#include "ir/core/tensor.h"

namespace onnx {
class TensorProto;
}

namespace tessel::onnx_frontend {

// The Tessel dtype of an ONNX TensorProto.DataType, or nullopt if unsupported.
std::optional<DType> dtype_from_onnx(int onnx_type);
int dtype_to_onnx(DType t);
std::string onnx_type_name(int onnx_type);

// Decodes a tensor. External data is read relative to model_dir and refused
// when its location escapes that folder. Errors are UserErrors naming the tensor.
Tensor tensor_from_proto(const onnx::TensorProto& proto, const std::string& model_dir);

void tensor_to_proto(const Tensor& t, const std::string& name, onnx::TensorProto* proto);

// Reads a serialised TensorProto (.pb), as in the onnx-node test data.
Tensor load_tensor_pb(const std::string& path, std::string* name = nullptr);
void save_tensor_pb(const Tensor& t, const std::string& name, const std::string& path);

}  // namespace tessel::onnx_frontend
