// XXH64 (Yann Collet's xxHash, 64-bit, seed 0), four lanes of 8-byte reads.
#include "src/runtime/checksum.h"

#include <bit>
#include <cstring>

namespace tessel::rt {

namespace {

constexpr uint64_t kP1 = 0x9E3779B185EBCA87ull, kP2 = 0xC2B2AE3D27D4EB4Full, kP3 = 0x165667B19E3779F9ull,
                   kP4 = 0x85EBCA77C2B2AE63ull, kP5 = 0x27D4EB2F165667C5ull;

template <typename T>
T read_le(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  if constexpr (std::endian::native == std::endian::big)
    v = sizeof(T) == 8 ? T(__builtin_bswap64(uint64_t(v))) : T(__builtin_bswap32(uint32_t(v)));
  return v;
}

uint64_t round(uint64_t acc, uint64_t input) {
  return std::rotl(acc + input * kP2, 31) * kP1;
}

uint64_t merge(uint64_t acc, uint64_t lane) {
  return (acc ^ round(0, lane)) * kP1 + kP4;
}

}  // namespace

uint64_t checksum64(const void* data, size_t size) {
  const uint8_t* p = static_cast<const uint8_t*>(data);
  const uint8_t* end = p + size;
  uint64_t h;
  if (size >= 32) {
    uint64_t v[4] = {kP1 + kP2, kP2, 0, 0 - kP1};
    for (; end - p >= 32; p += 32)
      for (int i = 0; i < 4; ++i) v[i] = round(v[i], read_le<uint64_t>(p + 8 * i));
    h = std::rotl(v[0], 1) + std::rotl(v[1], 7) + std::rotl(v[2], 12) + std::rotl(v[3], 18);
    for (uint64_t lane : v) h = merge(h, lane);
  } else {
    h = kP5;
  }
  h += uint64_t(size);
  for (; end - p >= 8; p += 8) h = std::rotl(h ^ round(0, read_le<uint64_t>(p)), 27) * kP1 + kP4;
  if (end - p >= 4) {
    h = std::rotl(h ^ (uint64_t(read_le<uint32_t>(p)) * kP1), 23) * kP2 + kP3;
    p += 4;
  }
  for (; p < end; ++p) h = std::rotl(h ^ (uint64_t(*p) * kP5), 11) * kP1;
  h ^= h >> 33;
  h *= kP2;
  h ^= h >> 29;
  h *= kP3;
  return h ^ (h >> 32);
}

}  // namespace tessel::rt
