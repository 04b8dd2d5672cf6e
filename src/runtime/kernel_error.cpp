// The message a failing kernel leaves for its caller: one per calling thread,
// so that contexts running on different threads keep theirs apart.
#include "src/runtime/kernel_error.h"

#include <string_view>

#include "src/runtime/kernel_abi.h"

namespace tessel::rt {

namespace {
thread_local std::string t_kernel_error;
}  // namespace

void set_kernel_error(std::string message) {
  t_kernel_error = std::move(message);
}

std::string take_kernel_error() {
  std::string message = std::move(t_kernel_error);
  t_kernel_error.clear();
  return message;
}

}  // namespace tessel::rt

extern "C" void tessel_rt_kernel_error(const char* format, const int64_t* values, int32_t count) {
  std::string out;
  std::string_view f = format ? format : "a kernel failed";
  int32_t next = 0;
  for (size_t i = 0; i < f.size(); ++i) {
    if (f.compare(i, 2, "{}") == 0 && next < count) {
      out += std::to_string(values[next++]);
      ++i;
      continue;
    }
    out += f[i];
  }
  tessel::rt::set_kernel_error(std::move(out));
}
