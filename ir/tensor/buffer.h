// Buffers of the tensor IR: a named, typed, shaped region of memory in one
// memory scope. Buffers have identity; the PrimFunc's parameters, its
// allocations and every load and store refer to the same BufferNode.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ir/core/dtype.h"
#include "ir/core/ref.h"

namespace tessel::tir {

// global: device or host memory; shared: one copy per GPU thread block;
// local: one copy per thread (registers when small).
enum class MemScope : uint8_t { kGlobal, kShared, kLocal };
std::string_view mem_scope_name(MemScope scope);  // "global", "shared", "local"

// Every buffer is 64-byte aligned at its start; row-major unless strides are
// given (storage_align pads the stride of one dimension).
inline constexpr int64_t kBufferAlignment = 64;

struct BufferNode : RefCounted {
  BufferNode(std::string name, DType dtype, std::vector<int64_t> shape, MemScope scope,
             std::vector<int64_t> strides = {});
  const std::string name;
  const DType dtype;
  const std::vector<int64_t> shape;
  const MemScope scope;
  // Elements between neighbours along each dimension. Never empty: filled
  // with the row-major strides when not given.
  const std::vector<int64_t> strides;

  int rank() const { return int(shape.size()); }
  int64_t num_elements() const;  // product of the shape
  // Elements the storage spans: 1 + sum((shape[i] - 1) * strides[i]), or 0.
  int64_t storage_elements() const;
  bool is_row_major() const;
};
using Buffer = Ref<const BufferNode>;

Buffer make_buffer(std::string name, DType dtype, std::vector<int64_t> shape,
                   MemScope scope = MemScope::kGlobal, std::vector<int64_t> strides = {});
std::vector<int64_t> row_major_strides(const std::vector<int64_t>& shape);

}  // namespace tessel::tir
