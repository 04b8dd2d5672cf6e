// The little-endian binary form of the runtime's embedded data (the plan,
// the GPU program): a Writer (sealed by a trailing checksum64), and a Reader
// whose every read is bounds-checked and whose counts are bounded by the
// bytes left, failing with PlanError.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "src/runtime/checksum.h"
#include "src/runtime/plan.h"

namespace tessel::rt {

class Writer {
 public:
  template <typename T>
  void put(T value) {
    auto bits = std::bit_cast<std::array<uint8_t, sizeof(T)>>(value);
    if constexpr (std::endian::native == std::endian::big) std::reverse(bits.begin(), bits.end());
    out_.insert(out_.end(), bits.begin(), bits.end());
  }
  void put_string(const std::string& s) {
    put(uint32_t(s.size()));
    out_.insert(out_.end(), s.begin(), s.end());
  }
  void put_bytes(const void* p, size_t n) {
    out_.insert(out_.end(), (const uint8_t*)p, (const uint8_t*)p + n);
  }
  std::vector<uint8_t> take() { return std::move(out_); }
  // The bytes with their checksum64 appended, as the embedded forms end.
  std::vector<uint8_t> take_sealed() {
    put(checksum64(out_.data(), out_.size()));
    return take();
  }

 private:
  std::vector<uint8_t> out_;
};

class Reader {
 public:
  // subject: what the bytes are, for the errors ("model plan").
  Reader(const uint8_t* data, size_t size, const char* subject = "model plan")
      : data_(data), size_(size), subject_(subject) {}

  template <typename T>
  T get(const char* what) {
    need(sizeof(T), what);
    std::array<uint8_t, sizeof(T)> bits;
    std::memcpy(bits.data(), data_ + pos_, sizeof(T));
    if constexpr (std::endian::native == std::endian::big) std::reverse(bits.begin(), bits.end());
    pos_ += sizeof(T);
    return std::bit_cast<T>(bits);
  }
  std::string get_string(const char* what) {
    uint32_t n = get<uint32_t>(what);
    need(n, what);
    std::string s(reinterpret_cast<const char*>(data_ + pos_), n);
    pos_ += n;
    return s;
  }
  // A count of items of at least min_item_bytes each: never more than the bytes left can hold.
  uint32_t get_count(const char* what, size_t min_item_bytes) {
    uint32_t n = get<uint32_t>(what);
    if (uint64_t(n) * min_item_bytes > size_ - pos_)
      throw PlanError("corrupt " + std::string(subject_) + ": " + std::string(what) + " " +
                      std::to_string(n) + " at byte " + std::to_string(pos_ - 4) + " exceeds the " +
                      std::to_string(size_ - pos_) + " bytes left");
    return n;
  }
  void need(size_t n, const char* what) const {
    if (n > size_ - pos_)
      throw PlanError("corrupt " + std::string(subject_) + ": truncated reading " + std::string(what) +
                      " at byte " + std::to_string(pos_) + " of " + std::to_string(size_));
  }
  size_t pos() const { return pos_; }
  size_t size() const { return size_; }

 private:
  const uint8_t* data_;
  size_t size_;
  const char* subject_;
  size_t pos_ = 0;
};

}  // namespace tessel::rt
