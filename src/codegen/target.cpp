// Parsing and describing targets; the llvm kind asks LLVM (host_target.h),
// the cuda kind NVRTC (nvrtc_library.h).
#include "src/codegen/target.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

#include "ir/core/diagnostics.h"
#include "src/codegen/cuda/nvrtc_library.h"
#include "src/codegen/llvm/cpu_features.h"
#include "src/codegen/llvm/host_target.h"
#include "src/codegen/llvm/peak_kernel.h"
#include "src/codegen/llvm/target_probe.h"
#include "src/codegen/machine_cache.h"

namespace tessel::codegen {

namespace {

int64_t sysconf_bytes(int name) {
  long v = sysconf(name);
  return v > 0 ? int64_t(v) : 0;
}

// -mattr=+a,-b: each item replaces an earlier item for the same feature.
void apply_mattr(CpuTarget& cpu, const std::string& list_text) {
  TESSEL_USER_CHECK(!list_text.empty(), Span{}) << "-mattr= needs a list of +feature or -feature items";
  std::istringstream list(list_text);
  for (std::string f; std::getline(list, f, ',');) {
    TESSEL_USER_CHECK(f.size() > 1 && (f[0] == '+' || f[0] == '-'), Span{})
        << "-mattr takes +feature or -feature items, got '" << f << "'";
    std::erase_if(cpu.features, [&](const std::string& g) { return g.substr(1) == f.substr(1); });
    cpu.features.push_back(f);
  }
}

// Resident threads of the architecture's largest part (H100 SXM, A100, RTX 4090, ...).
int64_t resident_threads(int sm) {
  if (sm >= 90) return 132 * 2048;
  if (sm == 80) return 108 * 2048;
  if (sm == 89) return 128 * 1536;
  if (sm == 86) return 84 * 1536;
  return 72 * 1024;
}

// Shared memory per SM by architecture (the CUDA programming guide's table).
int64_t shared_bytes_per_sm(int sm) {
  if (sm >= 90) return 228 * 1024;
  if (sm == 80 || sm == 87) return 164 * 1024;
  if (sm >= 86) return 100 * 1024;
  return 64 * 1024;
}

// The machine cache's key: the CPU as LLVM names it, the width and the features.
std::string fmas_key(const CpuTarget& cpu) {
  return "fmas_in_flight " + cpu.cpu + " " + std::to_string(cpu.vector_bits) + "-bit features " +
         features_hash(cpu);
}

// Measured once per machine and vector width (machine_cache.h), and kept per
// process: the host's cores are alike.
int host_fmas_in_flight(const CpuTarget& cpu) {
  // Without FMA instructions (x86 before Haswell, or -mattr=-fma) the kernel
  // would time calls to the C library's fmaf: nothing to learn about a core.
  bool x86 = cpu.triple.rfind("x86_64", 0) == 0 || cpu.triple.rfind("i686", 0) == 0;
  if (x86 && std::find(cpu.features.begin(), cpu.features.end(), "+fma") == cpu.features.end()) return 0;
  static std::mutex mutex;
  static std::map<int, int> measured;
  std::lock_guard lock(mutex);
  auto it = measured.find(cpu.vector_bits);
  if (it == measured.end()) {
    int n =
        cached_measurement(machine_cache_path(), fmas_key(cpu), [&] { return measure_fmas_in_flight(cpu); });
    it = measured.emplace(cpu.vector_bits, n).first;
  }
  return it->second;
}

int parse_fmas_in_flight(const std::string& text) {
  bool digits = !text.empty() && text.size() <= 2 && std::all_of(text.begin(), text.end(), ::isdigit);
  int n = digits ? std::stoi(text) : 0;
  TESSEL_USER_CHECK(n >= 1 && n <= 64, Span{})
      << "-fmas-in-flight takes a count from 1 to 64 (the vector FMAs one core overlaps), got '" << text
      << "'";
  return n;
}

int64_t parse_parallel_cycles(const std::string& text) {
  bool digits = !text.empty() && text.size() <= 12 && std::all_of(text.begin(), text.end(), ::isdigit);
  int64_t n = digits ? std::stoll(text) : 0;
  TESSEL_USER_CHECK(n >= 1, Span{})
      << "-parallel-cycles takes a count of cycles from 1 to 999999999999 (a kernel "
      << "estimated shorter stays on one thread), got '" << text << "'";
  return n;
}

void apply_arch(GpuTarget& gpu, const std::string& arch) {
  bool digits = arch.size() >= 5 && arch.rfind("sm_", 0) == 0 &&
                std::all_of(arch.begin() + 3, arch.end(), [](char c) { return c >= '0' && c <= '9'; });
  TESSEL_USER_CHECK(digits && arch.size() <= 6, Span{})
      << "-arch takes sm_NN (sm_80, sm_90, ...), got '" << arch << "'";
  gpu.sm = std::stoi(arch.substr(3));
  std::vector<int> known = nvrtc_architectures();
  if (known.empty()) {
    TESSEL_USER_CHECK(gpu.sm >= 75, Span{}) << "-arch=" << arch << ": CUDA 13 compiles for sm_75 and newer";
  } else {
    std::ostringstream list;
    for (int a : known) list << (a == known.front() ? "" : ", ") << "sm_" << a;
    TESSEL_USER_CHECK(std::find(known.begin(), known.end(), gpu.sm) != known.end(), Span{})
        << "-arch=" << arch << ": NVRTC compiles for " << list.str();
  }
  gpu.shared_bytes_per_sm = shared_bytes_per_sm(gpu.sm);
  gpu.resident_threads = resident_threads(gpu.sm);
}

}  // namespace

Target host_target() {
  Target t;
  t.cpu = host_cpu_target();
  t.cpu.vector_bits = vector_register_bits(t.cpu);
  t.cpu.fmas_in_flight = host_fmas_in_flight(t.cpu);
  t.cpu.cores = int(std::max(1u, std::thread::hardware_concurrency()));
  t.cpu.l1d_bytes = sysconf_bytes(_SC_LEVEL1_DCACHE_SIZE);
  t.cpu.l2_bytes = sysconf_bytes(_SC_LEVEL2_CACHE_SIZE);
  t.cpu.l3_bytes = sysconf_bytes(_SC_LEVEL3_CACHE_SIZE);
  return t;
}

const char* default_target_spec() {
  return llvm_available() ? "llvm" : "cuda";
}

Target default_target() {
  return llvm_available() ? host_target() : parse_target(default_target_spec());
}

Target parse_target(std::string_view spec, const std::vector<std::string>& extra_options) {
  std::istringstream words{std::string(spec)};
  std::string kind;
  words >> kind;
  TESSEL_USER_CHECK(kind == "llvm" || kind == "cuda" || kind == "cuda-emulated", Span{})
      << "unknown target '" << kind << "' (available: llvm, cuda, cuda-emulated)";
  std::vector<std::string> options;
  for (std::string w; words >> w;) options.push_back(w);
  options.insert(options.end(), extra_options.begin(), extra_options.end());
  Target t = host_target();
  bool cpu_named = false;
  int fmas_in_flight = 0;
  if (kind == "cuda" || kind == "cuda-emulated") {
    t.kind = TargetKind::kCuda;
    t.gpu.emulated = kind == "cuda-emulated";
    t.gpu.shared_bytes_per_sm = shared_bytes_per_sm(t.gpu.sm);
    t.gpu.resident_threads = resident_threads(t.gpu.sm);
  }
  for (const std::string& o : options) {
    if (o.rfind("-arch=", 0) == 0 && t.kind == TargetKind::kCuda) {
      apply_arch(t.gpu, o.substr(6));
    } else if (o == "-fast-math" && t.kind == TargetKind::kCuda) {
      t.gpu.fast_math = true;
    } else if (o.rfind("-mcpu=", 0) == 0 && t.kind == TargetKind::kLlvm) {
      t.cpu.cpu = o.substr(6);
      t.cpu.features.clear();  // the CPU's own features, unless -mattr adds
      cpu_named = true;
    } else if (o.rfind("-mattr=", 0) == 0 && t.kind == TargetKind::kLlvm) {
      apply_mattr(t.cpu, o.substr(7));
    } else if (o.rfind("-fmas-in-flight=", 0) == 0 && t.kind == TargetKind::kLlvm) {
      fmas_in_flight = parse_fmas_in_flight(o.substr(16));
    } else if (o.rfind("-parallel-cycles=", 0) == 0 && t.kind == TargetKind::kLlvm) {
      t.cpu.min_parallel_cycles = parse_parallel_cycles(o.substr(17));
    } else {
      TESSEL_USER_CHECK(false, Span{})
          << "unknown option '" << o << "' for target " << kind << " (available: "
          << (t.kind == TargetKind::kCuda ? "-arch=sm_NN, -fast-math"
                                          : "-mcpu=, -mattr=, -fmas-in-flight=, -parallel-cycles=")
          << ")";
    }
  }
  TESSEL_USER_CHECK(!(t.gpu.emulated && t.gpu.fast_math), Span{})
      << "-fast-math is for target cuda: the emulator computes with this CPU's math library";
  if (t.kind == TargetKind::kCuda) return t;  // the host CPU only drives the GPU
  check_cpu_target(t.cpu);
  std::optional<std::string> problem = llvm_cannot_generate(t.cpu);
  TESSEL_USER_CHECK(!problem, Span{}) << "target '" << spec << "': LLVM cannot generate code for this CPU and "
                                      << "features (" << *problem << ")";
  if (!options.empty()) t.cpu.features = resolved_cpu_features(t.cpu);
  t.cpu.vector_bits = vector_register_bits(t.cpu);
  if (cpu_named) t.cpu.l1d_bytes = t.cpu.l2_bytes = t.cpu.l3_bytes = 0;  // not this host's
  // Another CPU's pipelines are unknown unless named; this host's are measured
  // at the width the options leave (256-bit FMAs may issue more per cycle).
  if (fmas_in_flight > 0)
    t.cpu.fmas_in_flight = fmas_in_flight;
  else if (cpu_named || !features_host_lacks(t).empty())
    t.cpu.fmas_in_flight = 0;
  else if (!options.empty())
    t.cpu.fmas_in_flight = host_fmas_in_flight(t.cpu);
  return t;
}

std::vector<std::string> features_host_lacks(const Target& target) {
  if (target.kind != TargetKind::kLlvm) return {};
  // The host's list names its instruction-set features only, each + or -;
  // LLVM's tuning flags (fast-..., slow-...) are in neither and need nothing.
  std::set<std::string> host_lacks;
  for (const std::string& f : host_cpu_target().features)
    if (f[0] == '-') host_lacks.insert(f.substr(1));
  std::vector<std::string> lacking;
  for (const std::string& f : target.cpu.features)
    if (f[0] == '+' && host_lacks.count(f.substr(1))) lacking.push_back(f.substr(1));
  return lacking;
}

std::string features_hash(const CpuTarget& cpu) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a over "+f,-g,..."
  for (const std::string& f : cpu.features)
    for (unsigned char c : f + ",") h = (h ^ c) * 1099511628211ull;
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
  return hex;
}

const char* target_kind_name(TargetKind kind) {
  return kind == TargetKind::kCuda ? "cuda" : "llvm";
}

std::string describe(const Target& t) {
  std::ostringstream os;
  auto kib = [](int64_t b) { return b > 0 ? std::to_string(b / 1024) + " KiB" : std::string("unknown"); };
  os << "kind " << target_kind_name(t.kind) << "\n";
  if (t.kind == TargetKind::kCuda) {
    if (t.gpu.emulated) os << "emulated: the CUDA C runs on this CPU\n";
    if (t.gpu.fast_math) os << "fast math: NVRTC's --use_fast_math\n";
    os << "arch sm_" << t.gpu.sm << "\n"
       << "max threads per block " << t.gpu.max_threads_per_block << "\n"
       << "shared memory " << kib(t.gpu.shared_bytes_per_block) << " per block, " << kib(t.gpu.shared_bytes_per_sm)
       << " per SM\n"
       << "registers per SM " << t.gpu.registers_per_sm << "\n"
       << "host ";
  }
  size_t enabled = std::count_if(t.cpu.features.begin(), t.cpu.features.end(), [](auto& f) { return f[0] == '+'; });
  os << "triple " << t.cpu.triple << "\n"
     << "cpu " << t.cpu.cpu << "\n"
     << "vector registers " << t.cpu.vector_bits << " bits (" << t.cpu.vector_bits / 32 << " f32 lanes)\n"
     << "FMAs in flight "
     << (t.cpu.fmas_in_flight > 0 ? std::to_string(t.cpu.fmas_in_flight) : std::string("unknown"))
     << " (vector FMAs one core overlaps)\n"
     << "cores " << (t.cpu.cores > 0 ? std::to_string(t.cpu.cores) : std::string("unknown")) << "\n"
     << "parallel threshold "
     << (t.cpu.min_parallel_cycles > 0 ? std::to_string(t.cpu.min_parallel_cycles) + " cycles"
                                       : std::string("the default schedule's"))
     << " (a kernel estimated shorter on one core runs on one thread)\n"
     << "caches L1d " << kib(t.cpu.l1d_bytes) << ", L2 " << kib(t.cpu.l2_bytes) << ", L3 "
     << kib(t.cpu.l3_bytes) << "\n"
     << "features " << enabled << " enabled:";
  for (const std::string& f : t.cpu.features)
    if (f[0] == '+') os << " " << f.substr(1);
  os << "\n";
  return os.str();
}

}  // namespace tessel::codegen
