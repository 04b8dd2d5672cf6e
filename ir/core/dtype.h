// Element types of tensors in every IR, with their sizes and names.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "ir/core/small_types.h"

namespace tessel {

// New dtypes go at the end: the numbers are stored in model libraries and plans.
enum class DType : uint8_t {
  kF32,
  kF16,
  kBF16,
  kF64,
  kI8,
  kU8,
  kI32,
  kI64,
  kBool,
  kI16,
  kU16,
  kU32,
  kU64,
  // The storage-only types of small_types.h, one per byte: they are cast,
  // moved and (de)quantized, never computed on.
  kF8E4M3FN,
  kF8E4M3FNUZ,
  kF8E5M2,
  kF8E5M2FNUZ,
  kF8E8M0,
  kF4E2M1,
  kI4,
  kU4,
  kI2,
  kU2,
};

inline constexpr DType kAllDTypes[] = {
    DType::kF32,    DType::kF16,      DType::kBF16,       DType::kF64,    DType::kI8,         DType::kU8,
    DType::kI16,    DType::kU16,      DType::kI32,        DType::kU32,    DType::kI64,        DType::kU64,
    DType::kBool,   DType::kF8E4M3FN, DType::kF8E4M3FNUZ, DType::kF8E5M2, DType::kF8E5M2FNUZ, DType::kF8E8M0,
    DType::kF4E2M1, DType::kI4,       DType::kU4,         DType::kI2,     DType::kU2};

size_t dtype_size(DType t);
std::string_view dtype_name(DType t);  // "f32", "i64", "bool", ...
std::optional<DType> dtype_from_name(std::string_view name);
bool is_float(DType t);    // f32, f16, bf16, f64
bool is_integer(DType t);  // i8, u8, i16, u16, i32, u32, i64, u64 (not bool)
bool is_signed(DType t);
// The storage-only types (f8*, f4e2m1, i4, u4, i2, u2) and their format.
bool is_small(DType t);
// Whether a value's bits may be read as `to` (ONNX's BitCast): both of one
// size, neither a 16-bit float (held as f32 while computing) nor a
// storage-only type; bool only as the source (a byte other than 0 or 1 is no bool).
bool bitcast_allowed(DType from, DType to);
small_types::Format small_format(DType t);  // an internal error for other dtypes

// Storage types of the 16-bit floats: the bits, converted explicitly.
struct Half {
  uint16_t bits;
};
struct BFloat16 {
  uint16_t bits;
};
float half_to_float(Half h);
Half float_to_half(float f);
float bf16_to_float(BFloat16 b);
BFloat16 float_to_bf16(float f);

// The C++ type that stores one element of a dtype (bool is stored as bool, one byte).
template <DType T>
struct DTypeStorage;
template <> struct DTypeStorage<DType::kF32> { using type = float; };
template <> struct DTypeStorage<DType::kF16> { using type = Half; };
template <> struct DTypeStorage<DType::kBF16> { using type = BFloat16; };
template <> struct DTypeStorage<DType::kF64> { using type = double; };
template <> struct DTypeStorage<DType::kI8> { using type = int8_t; };
template <> struct DTypeStorage<DType::kU8> { using type = uint8_t; };
template <> struct DTypeStorage<DType::kI32> { using type = int32_t; };
template <> struct DTypeStorage<DType::kI64> { using type = int64_t; };
template <> struct DTypeStorage<DType::kBool> { using type = bool; };
template <>
struct DTypeStorage<DType::kI16> {
  using type = int16_t;
};
template <>
struct DTypeStorage<DType::kU16> {
  using type = uint16_t;
};
template <>
struct DTypeStorage<DType::kU32> {
  using type = uint32_t;
};
template <>
struct DTypeStorage<DType::kU64> {
  using type = uint64_t;
};

// A storage-only element: its code, one per byte (small_types.h decodes it).
template <small_types::Format F>
struct SmallBits {
  uint8_t bits;
};

}  // namespace tessel
