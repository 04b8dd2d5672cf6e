// The CPU feature check: one table from LLVM's feature names to cpuid bits
// and the XCR0 register state the OS must enable for them.
#include "src/runtime/cpu_features.h"

#include <algorithm>
#include <cstdint>

#include "src/runtime/plan.h"
#include "tessel/runtime.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#define TESSEL_X86 1
#endif

namespace tessel::rt {

namespace {

enum Reg : uint8_t { kEax, kEbx, kEcx, kEdx };

// XCR0 state components: SSE and AVX registers, AVX-512 opmask and upper
// halves, AMX tile config and data.
constexpr uint64_t kXmm = 0x2, kYmm = 0x6, kZmm = 0xe6, kTiles = 0x60006;

struct Feature {
  const char* name;  // LLVM's
  uint32_t leaf, subleaf;
  Reg reg;
  uint8_t bit;
  uint64_t xcr0;  // state the OS must save for the feature's registers
};

constexpr Feature kFeatures[] = {
    {"sse", 1, 0, kEdx, 25, 0},
    {"sse2", 1, 0, kEdx, 26, 0},
    {"sse3", 1, 0, kEcx, 0, 0},
    {"pclmul", 1, 0, kEcx, 1, 0},
    {"ssse3", 1, 0, kEcx, 9, 0},
    {"fma", 1, 0, kEcx, 12, kYmm},
    {"cx16", 1, 0, kEcx, 13, 0},
    {"sse4.1", 1, 0, kEcx, 19, 0},
    {"sse4.2", 1, 0, kEcx, 20, 0},
    {"movbe", 1, 0, kEcx, 22, 0},
    {"popcnt", 1, 0, kEcx, 23, 0},
    {"aes", 1, 0, kEcx, 25, kXmm},
    {"avx", 1, 0, kEcx, 28, kYmm},
    {"f16c", 1, 0, kEcx, 29, kYmm},
    {"bmi", 7, 0, kEbx, 3, 0},
    {"avx2", 7, 0, kEbx, 5, kYmm},
    {"bmi2", 7, 0, kEbx, 8, 0},
    {"avx512f", 7, 0, kEbx, 16, kZmm},
    {"avx512dq", 7, 0, kEbx, 17, kZmm},
    {"adx", 7, 0, kEbx, 19, 0},
    {"avx512ifma", 7, 0, kEbx, 21, kZmm},
    {"avx512cd", 7, 0, kEbx, 28, kZmm},
    {"sha", 7, 0, kEbx, 29, kXmm},
    {"avx512bw", 7, 0, kEbx, 30, kZmm},
    {"avx512vl", 7, 0, kEbx, 31, kZmm},
    {"avx512vbmi", 7, 0, kEcx, 1, kZmm},
    {"avx512vbmi2", 7, 0, kEcx, 6, kZmm},
    {"gfni", 7, 0, kEcx, 8, kXmm},
    {"vaes", 7, 0, kEcx, 9, kYmm},
    {"vpclmulqdq", 7, 0, kEcx, 10, kYmm},
    {"avx512vnni", 7, 0, kEcx, 11, kZmm},
    {"avx512bitalg", 7, 0, kEcx, 12, kZmm},
    {"avx512vpopcntdq", 7, 0, kEcx, 14, kZmm},
    {"avx512vp2intersect", 7, 0, kEdx, 8, kZmm},
    {"amx-bf16", 7, 0, kEdx, 22, kTiles},
    {"avx512fp16", 7, 0, kEdx, 23, kZmm},
    {"amx-tile", 7, 0, kEdx, 24, kTiles},
    {"amx-int8", 7, 0, kEdx, 25, kTiles},
    {"avxvnni", 7, 1, kEax, 4, kYmm},
    {"avx512bf16", 7, 1, kEax, 5, kZmm},
    {"lzcnt", 0x80000001, 0, kEcx, 5, 0},
    {"sse4a", 0x80000001, 0, kEcx, 6, 0},
    {"fma4", 0x80000001, 0, kEcx, 16, kYmm},
    {"xop", 0x80000001, 0, kEcx, 11, kYmm},
};

#ifdef TESSEL_X86
uint64_t os_enabled_state() {
  unsigned a, b, c, d;
  if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & (1u << 27))) return 0;  // no OSXSAVE: no XGETBV
  uint32_t lo, hi;
  asm volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return uint64_t(hi) << 32 | lo;
}

bool cpu_has(const Feature& f, uint64_t xcr0) {
  unsigned r[4] = {0, 0, 0, 0};
  if (!__get_cpuid_count(f.leaf, f.subleaf, &r[0], &r[1], &r[2], &r[3])) return false;
  return (r[f.reg] >> f.bit & 1) && (xcr0 & f.xcr0) == f.xcr0;
}
#endif

const Feature* find(const std::string& name) {
  for (const Feature& f : kFeatures)
    if (name == f.name) return &f;
  return nullptr;
}

}  // namespace

const std::vector<std::string>& checkable_cpu_features() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
#ifdef TESSEL_X86
    for (const Feature& f : kFeatures) out.push_back(f.name);
#endif
    return out;
  }();
  return names;
}

std::vector<std::string> required_cpu_features(const std::vector<std::string>& target_features) {
  const std::vector<std::string>& known = checkable_cpu_features();
  std::vector<std::string> out;
  for (const std::string& f : target_features)
    if (f.size() > 1 && f[0] == '+' && std::find(known.begin(), known.end(), f.substr(1)) != known.end())
      out.push_back(f.substr(1));
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::vector<std::string> missing_cpu_features(const std::vector<std::string>& required) {
  std::vector<std::string> missing;
#ifdef TESSEL_X86
  uint64_t xcr0 = os_enabled_state();
  for (const std::string& name : required) {
    const Feature* f = find(name);
    if (!f || !cpu_has(*f, xcr0)) missing.push_back(name);
  }
#else
  missing = required;
#endif
  return missing;
}

void check_cpu_features(const std::vector<std::string>& required) {
  std::vector<std::string> missing = missing_cpu_features(required);
  if (missing.empty()) return;
  std::string list;
  for (const std::string& m : missing) list += (list.empty() ? "" : ", ") + m;
  throw StatusError(
      TESSEL_ERR_UNSUPPORTED_CPU,
      "this model was compiled for CPU features this CPU lacks: " + list +
          " (compile it for this CPU, or with --target \"llvm -mcpu=...\" naming an older one)");
}

}  // namespace tessel::rt
