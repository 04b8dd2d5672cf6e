// dtype sizes, names and the 16-bit float conversions.
#include "ir/core/dtype.h"

#include <bit>
#include <cmath>
#include <cstring>

#include "ir/core/diagnostics.h"

namespace tessel {

size_t dtype_size(DType t) {
  switch (t) {
    case DType::kF64:
    case DType::kI64:
    case DType::kU64: return 8;
    case DType::kF32:
    case DType::kI32:
    case DType::kU32: return 4;
    case DType::kF16:
    case DType::kBF16:
    case DType::kI16:
    case DType::kU16: return 2;
    case DType::kI8:
    case DType::kU8:
    case DType::kBool: return 1;
    default: return 1;  // the storage-only types
  }
  TESSEL_ICHECK(false) << "unknown dtype";
  return 0;
}

std::string_view dtype_name(DType t) {
  switch (t) {
    case DType::kF32: return "f32";
    case DType::kF16: return "f16";
    case DType::kBF16: return "bf16";
    case DType::kF64: return "f64";
    case DType::kI8: return "i8";
    case DType::kU8: return "u8";
    case DType::kI32: return "i32";
    case DType::kI64: return "i64";
    case DType::kBool: return "bool";
    case DType::kI16: return "i16";
    case DType::kU16: return "u16";
    case DType::kU32: return "u32";
    case DType::kU64: return "u64";
    case DType::kF8E4M3FN: return "f8e4m3fn";
    case DType::kF8E4M3FNUZ: return "f8e4m3fnuz";
    case DType::kF8E5M2: return "f8e5m2";
    case DType::kF8E5M2FNUZ: return "f8e5m2fnuz";
    case DType::kF8E8M0: return "f8e8m0";
    case DType::kF4E2M1: return "f4e2m1";
    case DType::kI4: return "i4";
    case DType::kU4: return "u4";
    case DType::kI2: return "i2";
    case DType::kU2: return "u2";
  }
  return "?";
}

std::optional<DType> dtype_from_name(std::string_view name) {
  for (DType t : kAllDTypes)
    if (dtype_name(t) == name) return t;
  return std::nullopt;
}

bool is_float(DType t) {
  return t == DType::kF32 || t == DType::kF16 || t == DType::kBF16 || t == DType::kF64;
}
bool is_integer(DType t) {
  switch (t) {
    case DType::kI8:
    case DType::kU8:
    case DType::kI16:
    case DType::kU16:
    case DType::kI32:
    case DType::kU32:
    case DType::kI64:
    case DType::kU64: return true;
    default: return false;
  }
}
bool is_signed(DType t) {
  return is_float(t) || t == DType::kI8 || t == DType::kI16 || t == DType::kI32 || t == DType::kI64;
}

bool is_small(DType t) {
  return t >= DType::kF8E4M3FN && t <= DType::kU2;
}

bool bitcast_allowed(DType from, DType to) {
  auto plain = [](DType t) { return !is_small(t) && t != DType::kF16 && t != DType::kBF16; };
  return plain(from) && plain(to) && to != DType::kBool && dtype_size(from) == dtype_size(to);
}

small_types::Format small_format(DType t) {
  TESSEL_ICHECK(is_small(t)) << dtype_name(t) << " is not a storage-only type";
  return small_types::Format(int(t) - int(DType::kF8E4M3FN));
}

float half_to_float(Half h) {
  uint32_t sign = uint32_t(h.bits & 0x8000) << 16;
  uint32_t exp = (h.bits >> 10) & 0x1f;
  uint32_t mant = h.bits & 0x3ff;
  if (exp == 0) {  // zero or subnormal: value = mant * 2^-24
    float v = std::ldexp(float(mant), -24);
    return sign ? -v : v;
  }
  uint32_t bits = exp == 0x1f ? (sign | 0x7f800000u | (mant << 13))
                              : (sign | ((exp + 112) << 23) | (mant << 13));
  return std::bit_cast<float>(bits);
}

Half float_to_half(float f) {
  uint32_t x = std::bit_cast<uint32_t>(f);
  uint16_t sign = uint16_t((x >> 16) & 0x8000);
  if (std::isnan(f)) return Half{uint16_t(sign | 0x7e00)};
  float a = std::fabs(f);
  if (a >= 65520.0f) return Half{uint16_t(sign | 0x7c00)};  // rounds to infinity
  if (a < 6.103515625e-05f) {                                 // subnormal half
    return Half{uint16_t(sign | uint16_t(std::nearbyint(a * 16777216.0f)))};
  }
  uint32_t exp = ((x >> 23) & 0xff) - 112;
  uint32_t mant = x & 0x7fffff;
  uint32_t h = (exp << 10) | (mant >> 13);
  uint32_t rest = mant & 0x1fff;  // round to nearest even
  if (rest > 0x1000 || (rest == 0x1000 && (h & 1))) ++h;
  return Half{uint16_t(sign | h)};
}

float bf16_to_float(BFloat16 b) { return std::bit_cast<float>(uint32_t(b.bits) << 16); }

BFloat16 float_to_bf16(float f) {
  uint32_t x = std::bit_cast<uint32_t>(f);
  if (std::isnan(f)) return BFloat16{uint16_t((x >> 16) | 0x40)};
  uint32_t rounding = 0x7fff + ((x >> 16) & 1);
  return BFloat16{uint16_t((x + rounding) >> 16)};
}

}  // namespace tessel
