// Element types of tensors in every IR, with their sizes and names.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tessel {

enum class DType : uint8_t { kF32, kF16, kBF16, kF64, kI8, kU8, kI32, kI64, kBool };

inline constexpr DType kAllDTypes[] = {DType::kF32, DType::kF16, DType::kBF16,
                                       DType::kF64, DType::kI8,  DType::kU8,
                                       DType::kI32, DType::kI64, DType::kBool};

size_t dtype_size(DType t);
std::string_view dtype_name(DType t);  // "f32", "i64", "bool", ...
std::optional<DType> dtype_from_name(std::string_view name);
bool is_float(DType t);    // f32, f16, bf16, f64
bool is_integer(DType t);  // i8, u8, i32, i64 (not bool)
bool is_signed(DType t);

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

}  // namespace tessel
