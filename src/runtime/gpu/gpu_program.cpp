// The GPU program's binary form, checked as the plan's is (plan.cpp): the
// trailing checksum first, then every count bounded and every field
// validated, so that a corrupt program is a PlanError, never a launch of
// something that does not exist.
#include "src/runtime/gpu/gpu_program.h"

#include "src/runtime/byte_io.h"
#include "src/runtime/checksum.h"

namespace tessel::rt {

namespace {

constexpr char kMagic[8] = {'T', 'S', 'L', 'G', 'P', 'U', '\0', '\0'};
constexpr uint32_t kFormatVersion = 1;
constexpr uint32_t kMaxThreadsPerBlock = 1024;
constexpr const char* kSubject = "GPU program";

[[noreturn]] void fail(const std::string& why) {
  throw PlanError("corrupt GPU program: " + why);
}

void put_launch(Writer& w, const GpuLaunch& l) {
  w.put_string(l.kernel);
  for (int d = 0; d < 3; ++d) w.put(l.grid[d]);
  for (int d = 0; d < 3; ++d) w.put(l.block[d]);
  w.put(l.shared_bytes);
  w.put(uint8_t(l.has_barrier));
  w.put(uint32_t(l.args.size()));
  for (const GpuArg& a : l.args) {
    w.put(uint8_t(a.kind));
    w.put(a.value);
  }
}

GpuLaunch get_launch(Reader& r, const GpuFunction& f) {
  GpuLaunch l;
  l.kernel = r.get_string("a kernel name");
  if (l.kernel.empty()) fail("a launch of " + f.symbol + " names no kernel");
  uint64_t threads = 1;
  for (int d = 0; d < 3; ++d) l.grid[d] = r.get<uint32_t>("a grid");
  for (int d = 0; d < 3; ++d) threads *= (l.block[d] = r.get<uint32_t>("a block"));
  if (threads > kMaxThreadsPerBlock)
    fail(l.kernel + " has " + std::to_string(threads) + " threads per block");
  l.shared_bytes = r.get<uint64_t>("shared bytes");
  l.has_barrier = r.get<uint8_t>("the barrier flag") != 0;
  l.args.resize(r.get_count("arguments", 9));
  for (GpuArg& a : l.args) {
    uint8_t kind = r.get<uint8_t>("an argument kind");
    a.value = r.get<uint64_t>("an argument");
    if (kind > uint8_t(GpuArg::Kind::kScratch))
      fail(l.kernel + " has an argument of kind " + std::to_string(kind));
    a.kind = GpuArg::Kind(kind);
    bool fits = a.kind == GpuArg::Kind::kParam ? a.value < f.param_bytes.size() : a.value < f.scratch_bytes;
    if (!fits) fail(l.kernel + " has an argument outside " + f.symbol + "'s parameters and scratch");
  }
  return l;
}

void put_body(Writer& w, const GpuProgram& p) {
  w.put(uint32_t(p.functions.size()));
  for (const GpuFunction& f : p.functions) {
    w.put_string(f.symbol);
    w.put(f.num_inputs);
    w.put(f.num_outputs);
    w.put(uint32_t(f.param_bytes.size()));
    for (uint64_t b : f.param_bytes) w.put(b);
    w.put(f.scratch_bytes);
    w.put(uint32_t(f.launches.size()));
    for (const GpuLaunch& l : f.launches) put_launch(w, l);
  }
  w.put(uint32_t(p.asserts.size()));
  for (const GpuAssert& a : p.asserts) {
    w.put_string(a.format);
    w.put(a.values);
  }
  w.put(p.image.sm);
  w.put_string(p.image.cubin);
  w.put_string(p.image.ptx);
}

GpuFunction get_function(Reader& r) {
  GpuFunction f;
  f.symbol = r.get_string("a function name");
  f.num_inputs = r.get<uint32_t>("an input count");
  f.num_outputs = r.get<uint32_t>("an output count");
  f.param_bytes.resize(r.get_count("parameters", 8));
  for (uint64_t& b : f.param_bytes) b = r.get<uint64_t>("a parameter's bytes");
  if (uint64_t(f.num_inputs) + f.num_outputs != f.param_bytes.size())
    fail(f.symbol + " has " + std::to_string(f.param_bytes.size()) +
         " parameters, not its inputs and outputs");
  f.scratch_bytes = r.get<uint64_t>("scratch bytes");
  f.launches.resize(r.get_count("launches", 40));
  for (GpuLaunch& l : f.launches) l = get_launch(r, f);
  return f;
}

}  // namespace

std::vector<uint8_t> serialize_gpu_program(const GpuProgram& program) {
  Writer w;
  w.put_bytes(kMagic, sizeof kMagic);
  w.put(kFormatVersion);
  put_body(w, program);
  return w.take_sealed();
}

GpuProgram deserialize_gpu_program(const uint8_t* data, size_t size) {
  if (!data || size < sizeof kMagic + 4 + 8) fail("too short");
  if (std::memcmp(data, kMagic, sizeof kMagic) != 0) fail("bad magic (not TSLGPU)");
  size_t body = size - 8;
  uint64_t stored = Reader(data + body, 8, kSubject).get<uint64_t>("the checksum");
  if (stored != checksum64(data, body)) fail("checksum mismatch");
  Reader r(data, body, kSubject);
  for (size_t i = 0; i < sizeof kMagic; ++i) r.get<uint8_t>("the magic");
  if (uint32_t version = r.get<uint32_t>("the format version"); version != kFormatVersion)
    fail("format version " + std::to_string(version) + " (this runtime reads " +
         std::to_string(kFormatVersion) + ")");
  GpuProgram p;
  p.functions.resize(r.get_count("functions", 40));
  for (GpuFunction& f : p.functions) f = get_function(r);
  p.asserts.resize(r.get_count("checks", 8));
  for (GpuAssert& a : p.asserts) {
    a.format = r.get_string("a check's format");
    a.values = r.get<int32_t>("a check's value count");
    if (a.values < 0 || a.values > 4) fail("a check with " + std::to_string(a.values) + " values");
  }
  p.image.sm = r.get<int32_t>("the architecture");
  p.image.cubin = r.get_string("the CUBIN");
  p.image.ptx = r.get_string("the PTX");
  if (r.pos() != r.size()) fail(std::to_string(r.size() - r.pos()) + " bytes after the program");
  return p;
}

}  // namespace tessel::rt
