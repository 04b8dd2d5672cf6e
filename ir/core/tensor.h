// A host tensor: dtype, shape and a shared, 64-byte aligned buffer. Weights in
// the graph IR, reference-executor values and test data are all Tensors.
// Copies share the buffer (a handle, like a numpy view of the whole array).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ir/core/diagnostics.h"
#include "ir/core/dtype.h"

namespace tessel {

using Dims = std::vector<int64_t>;

int64_t num_elements(const Dims& shape);
Dims contiguous_strides(const Dims& shape);  // row-major, in elements
std::string dims_str(const Dims& shape);     // "[1, 3, 224, 224]"

class Tensor {
 public:
  Tensor() = default;
  // Zero-filled. Throws UserError for a negative dimension or an absurd size.
  Tensor(DType dtype, Dims shape);

  DType dtype() const { return dtype_; }
  const Dims& shape() const { return shape_; }
  int rank() const { return int(shape_.size()); }
  int64_t numel() const { return numel_; }
  size_t nbytes() const { return size_t(numel_) * dtype_size(dtype_); }
  bool defined() const { return data_ != nullptr || numel_ == 0; }

  void* raw() { return data_.get(); }
  const void* raw() const { return data_.get(); }

  template <typename T>
  T* data() {
    TESSEL_ICHECK(sizeof(T) == dtype_size(dtype_)) << "element type does not match " << dtype_name(dtype_);
    return reinterpret_cast<T*>(data_.get());
  }
  template <typename T>
  const T* data() const {
    TESSEL_ICHECK(sizeof(T) == dtype_size(dtype_)) << "element type does not match " << dtype_name(dtype_);
    return reinterpret_cast<const T*>(data_.get());
  }

  // Element i (row-major) converted to double / int64, whatever the dtype.
  double get_f64(int64_t i) const;
  int64_t get_i64(int64_t i) const;
  void set_f64(int64_t i, double v);  // converted to the dtype as a C++ cast would
  void set_i64(int64_t i, int64_t v);

  // All elements as int64 (for shape-like inputs: axes, pads, shapes).
  std::vector<int64_t> to_i64_vector() const;
  std::vector<double> to_f64_vector() const;

  // A deep copy with its own buffer.
  Tensor clone() const;
  // Same buffer, new shape with the same element count.
  Tensor reshaped(Dims shape) const;
  // A copy with its dimensions in the order `order` lists them (a
  // permutation of 0..rank-1): result[i] = this[j] where j[order[k]] = i[k].
  // {0, 2, 3, 1} turns an NCHW tensor into NHWC.
  Tensor permuted(const Dims& order) const;

  static Tensor from_i64(const std::vector<int64_t>& values, Dims shape);
  static Tensor from_i64(const std::vector<int64_t>& values) {
    return from_i64(values, {int64_t(values.size())});
  }
  static Tensor scalar_f64(DType dtype, double value);

  std::string type_str() const;  // "f32[1, 3, 224, 224]"

 private:
  DType dtype_ = DType::kF32;
  Dims shape_;
  int64_t numel_ = 0;
  std::shared_ptr<std::byte[]> data_;
};

template <typename T>
inline constexpr bool is_small_bits_v = false;
template <small_types::Format F>
inline constexpr bool is_small_bits_v<SmallBits<F>> = true;
template <small_types::Format F>
constexpr small_types::Format small_format_of_tag(SmallBits<F>) {
  return F;
}
// The format of a SmallBits storage type.
template <typename T>
constexpr small_types::Format small_format_of() {
  return small_format_of_tag(T{});
}

// Calls f(T{}) with T the storage type of dtype, for generic kernels.
template <typename F>
decltype(auto) dispatch_dtype(DType dtype, F&& f) {
  switch (dtype) {
    case DType::kF32: return f(float{});
    case DType::kF64: return f(double{});
    case DType::kF16: return f(Half{});
    case DType::kBF16: return f(BFloat16{});
    case DType::kI8: return f(int8_t{});
    case DType::kU8: return f(uint8_t{});
    case DType::kI32: return f(int32_t{});
    case DType::kI64: return f(int64_t{});
    case DType::kBool: return f(bool{});
    case DType::kI16: return f(int16_t{});
    case DType::kU16: return f(uint16_t{});
    case DType::kU32: return f(uint32_t{});
    case DType::kU64: return f(uint64_t{});
    case DType::kF8E4M3FN: return f(SmallBits<small_types::Format::kE4M3FN>{});
    case DType::kF8E4M3FNUZ: return f(SmallBits<small_types::Format::kE4M3FNUZ>{});
    case DType::kF8E5M2: return f(SmallBits<small_types::Format::kE5M2>{});
    case DType::kF8E5M2FNUZ: return f(SmallBits<small_types::Format::kE5M2FNUZ>{});
    case DType::kF8E8M0: return f(SmallBits<small_types::Format::kE8M0>{});
    case DType::kF4E2M1: return f(SmallBits<small_types::Format::kE2M1>{});
    case DType::kI4: return f(SmallBits<small_types::Format::kI4>{});
    case DType::kU4: return f(SmallBits<small_types::Format::kU4>{});
    case DType::kI2: return f(SmallBits<small_types::Format::kI2>{});
    case DType::kU2: return f(SmallBits<small_types::Format::kU2>{});
  }
  TESSEL_ICHECK(false) << "unknown dtype";
  return f(float{});
}

}  // namespace tessel
