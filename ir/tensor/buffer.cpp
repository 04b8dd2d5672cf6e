// Buffers: construction, strides and sizes.
#include "ir/tensor/buffer.h"

#include "ir/core/diagnostics.h"

namespace tessel::tir {

std::string_view mem_scope_name(MemScope scope) {
  switch (scope) {
    case MemScope::kGlobal: return "global";
    case MemScope::kShared: return "shared";
    case MemScope::kLocal: return "local";
  }
  return "?";
}

std::vector<int64_t> row_major_strides(const std::vector<int64_t>& shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (int i = int(shape.size()) - 2; i >= 0; --i) strides[i] = strides[i + 1] * shape[i + 1];
  return strides;
}

BufferNode::BufferNode(std::string name, DType dtype, std::vector<int64_t> shape, MemScope scope,
                       std::vector<int64_t> strides)
    : name(std::move(name)),
      dtype(dtype),
      shape(std::move(shape)),
      scope(scope),
      strides(strides.empty() ? row_major_strides(this->shape) : std::move(strides)) {
  TESSEL_ICHECK(this->strides.size() == this->shape.size()) << "buffer " << this->name << ": strides rank";
  for (int64_t d : this->shape) TESSEL_ICHECK(d >= 0) << "buffer " << this->name << ": negative extent";
}

int64_t BufferNode::num_elements() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

int64_t BufferNode::storage_elements() const {
  int64_t span = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == 0) return 0;
    span += (shape[i] - 1) * strides[i];
  }
  return span;
}

bool BufferNode::is_row_major() const {
  return strides == row_major_strides(shape);
}

Buffer make_buffer(std::string name, DType dtype, std::vector<int64_t> shape, MemScope scope,
                   std::vector<int64_t> strides) {
  return make_ref<BufferNode>(std::move(name), dtype, std::move(shape), scope, std::move(strides));
}

}  // namespace tessel::tir
