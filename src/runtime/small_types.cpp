// The kernels' conversions of the storage-only element types, for the
// compiled code (the JIT and every model.so): small_types.h's, behind a C ABI.
#include "ir/core/small_types.h"

#include "src/runtime/kernel_abi.h"

// Codes travel as int32: the widths every ABI passes the same way.
extern "C" double tessel_rt_small_decode(int32_t code, int32_t format) {
  return tessel::small_types::decode(tessel::small_types::Format(format), uint8_t(code));
}

extern "C" int32_t tessel_rt_small_encode(double x, int32_t format, int32_t saturate) {
  return tessel::small_types::encode(tessel::small_types::Format(format), x, saturate != 0);
}
