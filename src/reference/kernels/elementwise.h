// What the elementwise reference kernel files share: which storage types a
// dtype class admits (the same classes the schemas check), and the
// registration functions of the split-off kernel files.
#pragma once

#include <type_traits>

#include "ir/graph/ops/elementwise.h"
#include "src/reference/kernel_registry.h"
#include "src/reference/kernels/element_access.h"

namespace tessel::reference::kernels {

using graph::ops::TypeClass;

template <typename T>
inline constexpr bool is_float_storage_v =
    std::is_floating_point_v<T> || std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;

// Whether storage type T belongs to dtype class K.
template <TypeClass K, typename T>
constexpr bool admits() {
  if constexpr (K == TypeClass::kFloat)
    return is_float_storage_v<T>;
  else if constexpr (K == TypeClass::kSignedNumeric)
    return is_float_storage_v<T> || (is_int_v<T> && std::is_signed_v<T>);
  else if constexpr (K == TypeClass::kNumeric)
    return is_float_storage_v<T> || is_int_v<T>;
  else if constexpr (K == TypeClass::kBool)
    return std::is_same_v<T, bool>;
  else if constexpr (K == TypeClass::kInteger)
    return is_int_v<T>;
  else if constexpr (K == TypeClass::kUnsigned)
    return is_int_v<T> && std::is_unsigned_v<T>;
  else
    return !is_small_bits_v<T>;  // the storage-only types are cast, never computed on
}

// The shape functions reject these dtypes first; reaching here means a kernel
// was called without them (a unit test, a pass that skipped inference).
inline void unsupported_dtype(const graph::Node& n, DType t) {
  TESSEL_USER_ERROR(n.span()) << n.op << " does not support dtype " << dtype_name(t);
}

void register_elementwise_binary(KernelRegistry& r);   // elementwise_binary.cpp
void register_elementwise_special(KernelRegistry& r);  // elementwise_special.cpp

}  // namespace tessel::reference::kernels
