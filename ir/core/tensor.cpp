// Host tensor storage, element conversion and small constructors.
#include "ir/core/tensor.h"

#include <algorithm>
#include <cstring>
#include <new>
#include <sstream>
#include <type_traits>

namespace tessel {

namespace {

constexpr int64_t kMaxBytes = int64_t(1) << 40;  // refuse sizes no machine here can hold

template <typename T>
double load_as_double(const void* p, int64_t i) {
  const T* d = static_cast<const T*>(p);
  if constexpr (is_small_bits_v<T>)
    return small_types::decode(small_format_of<T>(), d[i].bits);
  else if constexpr (std::is_same_v<T, Half>)
    return half_to_float(d[i]);
  else if constexpr (std::is_same_v<T, BFloat16>) return bf16_to_float(d[i]);
  else return double(d[i]);
}

template <typename T>
void store_from_double(void* p, int64_t i, double v) {
  T* d = static_cast<T*>(p);
  if constexpr (is_small_bits_v<T>)
    d[i].bits = small_types::encode(small_format_of<T>(), v, true);
  else if constexpr (std::is_same_v<T, Half>)
    d[i] = float_to_half(float(v));
  else if constexpr (std::is_same_v<T, BFloat16>) d[i] = float_to_bf16(float(v));
  else if constexpr (std::is_same_v<T, bool>) d[i] = v != 0.0;
  else if constexpr (std::is_integral_v<T>) d[i] = T(int64_t(v));
  else d[i] = T(v);
}

// An integer into a storage-only element: its low bits for the small
// integers (no trip through double), else the float encoding.
template <small_types::Format F>
void set_small(SmallBits<F>& element, int64_t v) {
  if constexpr (small_types::is_integer_format(F))
    element.bits = uint8_t(uint64_t(v) & ((1u << small_types::width_bits(F)) - 1));
  else
    element.bits = small_types::encode(F, double(v), true);
}

}  // namespace

int64_t num_elements(const Dims& shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    TESSEL_USER_CHECK(!__builtin_mul_overflow(n, d, &n), Span{})
        << "shape " << dims_str(shape) << " has more elements than 64 bits can count";
  return n;
}

Dims contiguous_strides(const Dims& shape) {
  // A shape with a zero dimension holds no element, whatever its others: its
  // strides index nothing and may not fit 64 bits (they are left 0 then).
  bool empty = std::find(shape.begin(), shape.end(), int64_t(0)) != shape.end();
  Dims strides(shape.size(), 1);
  for (int i = int(shape.size()) - 2; i >= 0; --i) {
    bool overflow = __builtin_mul_overflow(strides[i + 1], shape[i + 1], &strides[i]);
    TESSEL_USER_CHECK(!overflow || empty, Span{})
        << "shape " << dims_str(shape) << " has more elements than 64 bits can count";
    if (overflow) strides[i] = 0;
  }
  return strides;
}

std::string dims_str(const Dims& shape) {
  std::ostringstream os;
  os << "[";
  for (size_t i = 0; i < shape.size(); ++i) os << (i ? ", " : "") << shape[i];
  os << "]";
  return os.str();
}

Tensor::Tensor(DType dtype, Dims shape) : dtype_(dtype), shape_(std::move(shape)) {
  numel_ = 1;
  for (int64_t d : shape_) {
    TESSEL_USER_CHECK(d >= 0, Span{}) << "negative dimension in tensor shape " << dims_str(shape_);
    TESSEL_USER_CHECK(d == 0 || numel_ <= kMaxBytes / d, Span{})
        << "tensor of shape " << dims_str(shape_) << " is too large";
    numel_ *= d;
  }
  TESSEL_USER_CHECK(numel_ <= kMaxBytes / int64_t(dtype_size(dtype)), Span{})
      << "tensor of shape " << dims_str(shape_) << " is too large";
  size_t bytes = (nbytes() + 63) / 64 * 64;
  if (bytes == 0) bytes = 64;
  auto* p = static_cast<std::byte*>(::operator new[](bytes, std::align_val_t(64)));
  std::memset(p, 0, bytes);
  data_ = std::shared_ptr<std::byte[]>(
      p, [](std::byte* q) { ::operator delete[](q, std::align_val_t(64)); });
}

double Tensor::get_f64(int64_t i) const {
  return dispatch_dtype(dtype_, [&](auto t) { return load_as_double<decltype(t)>(raw(), i); });
}

int64_t Tensor::get_i64(int64_t i) const {
  return dispatch_dtype(dtype_, [&](auto t) -> int64_t {
    using T = decltype(t);
    if constexpr (std::is_integral_v<T>) {
      return int64_t(data<T>()[i]);
    } else {
      double v = load_as_double<T>(raw(), i);  // x86's conversion: NaN and out-of-range values give INT64_MIN
      return (v >= -9223372036854775808.0 && v < 9223372036854775808.0) ? int64_t(v) : INT64_MIN;
    }
  });
}

void Tensor::set_f64(int64_t i, double v) {
  dispatch_dtype(dtype_, [&](auto t) { store_from_double<decltype(t)>(raw(), i, v); });
}

void Tensor::set_i64(int64_t i, int64_t v) {
  dispatch_dtype(dtype_, [&](auto t) {
    using T = decltype(t);
    if constexpr (std::is_same_v<T, bool>) data<T>()[i] = v != 0;
    else if constexpr (std::is_integral_v<T>) data<T>()[i] = T(v);
    else if constexpr (is_small_bits_v<T>)
      set_small(data<T>()[i], v);
    else store_from_double<T>(raw(), i, double(v));
  });
}

std::vector<int64_t> Tensor::to_i64_vector() const {
  std::vector<int64_t> out(static_cast<size_t>(numel_));
  for (int64_t i = 0; i < numel_; ++i) out[size_t(i)] = get_i64(i);
  return out;
}

std::vector<double> Tensor::to_f64_vector() const {
  std::vector<double> out(static_cast<size_t>(numel_));
  for (int64_t i = 0; i < numel_; ++i) out[size_t(i)] = get_f64(i);
  return out;
}

Tensor Tensor::clone() const {
  Tensor t(dtype_, shape_);
  if (nbytes()) std::memcpy(t.raw(), raw(), nbytes());
  return t;
}

Tensor Tensor::reshaped(Dims shape) const {
  TESSEL_ICHECK(num_elements(shape) == numel_) << "reshape " << dims_str(shape_) << " to " << dims_str(shape);
  Tensor t = *this;
  t.shape_ = std::move(shape);
  return t;
}

Tensor Tensor::permuted(const Dims& order) const {
  TESSEL_ICHECK(order.size() == shape_.size())
      << "permutation of " << order.size() << " dims for " << dims_str(shape_);
  Dims shape, source_strides, strides = contiguous_strides(shape_);
  for (int64_t d : order) {
    TESSEL_ICHECK(d >= 0 && d < rank()) << "permutation entry " << d << " for " << dims_str(shape_);
    shape.push_back(shape_[size_t(d)]);
    source_strides.push_back(strides[size_t(d)]);
  }
  Tensor out(dtype_, shape);
  size_t size = dtype_size(dtype_);
  const auto* src = static_cast<const std::byte*>(raw());
  auto* dst = static_cast<std::byte*>(out.raw());
  Dims index(shape.size(), 0);
  for (int64_t i = 0; i < numel_; ++i) {
    int64_t from = 0;
    for (size_t k = 0; k < index.size(); ++k) from += index[k] * source_strides[k];
    std::memcpy(dst + size_t(i) * size, src + size_t(from) * size, size);
    for (size_t k = index.size(); k-- > 0;) {  // the next index, row-major
      if (++index[k] < shape[k]) break;
      index[k] = 0;
    }
  }
  return out;
}

Tensor Tensor::from_i64(const std::vector<int64_t>& values, Dims shape) {
  Tensor t(DType::kI64, std::move(shape));
  TESSEL_ICHECK(t.numel() == int64_t(values.size())) << "value count does not match shape";
  if (!values.empty()) std::memcpy(t.raw(), values.data(), values.size() * sizeof(int64_t));
  return t;
}

Tensor Tensor::scalar_f64(DType dtype, double value) {
  Tensor t(dtype, {});
  t.set_f64(0, value);
  return t;
}

std::string Tensor::type_str() const { return std::string(dtype_name(dtype_)) + dims_str(shape_); }

}  // namespace tessel
