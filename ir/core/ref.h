// Ref<T>: the intrusive, reference-counted handle behind every IR node. Nodes
// are immutable once built and shared between functions; a Ref compares by
// identity (same_as), never by structure (see ir/tensor/structural.h).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <type_traits>
#include <utility>

namespace tessel {

// Base of every shared IR object. The count is atomic so that functions built
// on one thread may be read and released on another (the tuner's workers).
class RefCounted {
 public:
  RefCounted() = default;
  RefCounted(const RefCounted&) : ref_count_(0) {}
  RefCounted& operator=(const RefCounted&) { return *this; }
  virtual ~RefCounted() = default;

  void retain() const { ref_count_.fetch_add(1, std::memory_order_relaxed); }
  void release() const {
    if (ref_count_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
  }

 private:
  mutable std::atomic<int32_t> ref_count_{0};
};

template <typename T>
class Ref {
 public:
  Ref() = default;
  Ref(std::nullptr_t) {}
  explicit Ref(T* ptr) : ptr_(ptr) {
    if (ptr_) ptr_->retain();
  }
  Ref(const Ref& other) : Ref(other.ptr_) {}
  Ref(Ref&& other) noexcept : ptr_(std::exchange(other.ptr_, nullptr)) {}
  template <typename U, typename = std::enable_if_t<std::is_convertible_v<U*, T*>>>
  Ref(const Ref<U>& other) : Ref(other.get()) {}
  ~Ref() {
    if (ptr_) ptr_->release();
  }
  Ref& operator=(Ref other) noexcept {
    std::swap(ptr_, other.ptr_);
    return *this;
  }

  T* get() const { return ptr_; }
  T* operator->() const { return ptr_; }
  T& operator*() const { return *ptr_; }
  bool defined() const { return ptr_ != nullptr; }
  explicit operator bool() const { return ptr_ != nullptr; }
  bool same_as(const Ref& other) const { return ptr_ == other.ptr_; }

  // The node as a concrete kind, or nullptr. Needs T::kind and U::kKind.
  template <typename U>
  const U* as() const& {
    if (ptr_ && ptr_->kind == U::kKind) return static_cast<const U*>(ptr_);
    return nullptr;
  }
  // Not on a temporary handle: when it holds the last reference, the node dies
  // at the end of the full expression and the pointer dangles. Name the handle.
  template <typename U>
  const U* as() const&& = delete;

 private:
  T* ptr_ = nullptr;
};

template <typename T, typename... Args>
Ref<T> make_ref(Args&&... args) {
  return Ref<T>(new T(std::forward<Args>(args)...));
}

// Hash and equality by identity, for unordered containers keyed by nodes.
struct RefHash {
  template <typename T>
  size_t operator()(const Ref<T>& ref) const {
    return std::hash<const void*>()(ref.get());
  }
};
struct RefEqual {
  template <typename T>
  bool operator()(const Ref<T>& a, const Ref<T>& b) const {
    return a.get() == b.get();
  }
};

}  // namespace tessel
