// The plan's binary form and its checks. The trailing checksum catches any
// corruption; beyond it every read is bounds-checked, every count is bounded
// by the bytes left and every field is validated, so that even a corrupt plan
// with a matching checksum is a PlanError, never a crash or a huge allocation.
#include "src/runtime/plan.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>

#include "src/runtime/byte_io.h"
#include "src/runtime/checksum.h"
#include "tessel/runtime.h"

namespace tessel::rt {

PlanError::PlanError(const std::string& message) : StatusError(TESSEL_ERR_CORRUPT_MODEL, message) {}

namespace {

constexpr char kMagic[8] = {'T', 'S', 'L', 'P', 'L', 'A', 'N', '\0'};
constexpr size_t kChecksumBytes = 8;
constexpr size_t kMaxFeatureName = 64;

void put_spec(Writer& w, const TensorSpec& spec) {
  w.put_string(spec.name);
  w.put(spec.dtype);
  w.put(uint32_t(spec.shape.size()));
  for (int64_t d : spec.shape) w.put(d);
}

TensorSpec get_spec(Reader& r) {
  TensorSpec spec;
  spec.name = r.get_string("tensor name");
  spec.dtype = r.get<uint8_t>("tensor dtype");
  uint32_t rank = r.get_count("tensor rank", sizeof(int64_t));
  if (rank > kMaxRank)
    throw PlanError("corrupt model plan: tensor '" + spec.name + "' of rank " + std::to_string(rank) +
                    " (at most " + std::to_string(kMaxRank) + ")");
  for (uint32_t i = 0; i < rank; ++i) spec.shape.push_back(r.get<int64_t>("tensor dimension"));
  return spec;
}

std::vector<TensorSpec> get_specs(Reader& r, const char* what) {
  std::vector<TensorSpec> specs(r.get_count(what, 9));  // name length, dtype, rank
  for (TensorSpec& s : specs) s = get_spec(r);
  return specs;
}

std::string shape_str(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? "," : "") + std::to_string(shape[i]);
  return s + "]";
}

void fail(const std::string& message) {
  throw PlanError("invalid model plan: " + message);
}

// offset + bytes <= limit, without overflow.
bool fits(uint64_t offset, uint64_t bytes, uint64_t limit) {
  return offset <= limit && bytes <= limit - offset;
}

void validate_slot(const Plan& plan, size_t id, uint64_t weights_size) {
  const BufferSlot& b = plan.buffers[id];
  std::string name = "buffer " + std::to_string(id);
  auto check_tensor = [&](const std::vector<TensorSpec>& specs, const char* kind) {
    if (b.index >= specs.size())
      fail(name + ": " + kind + " " + std::to_string(b.index) + " out of range (" +
           std::to_string(specs.size()) + " " + kind + "s)");
    const TensorSpec& spec = specs[b.index];
    if (b.bytes != tensor_bytes(spec))
      fail(name + ": " + std::to_string(b.bytes) + " bytes for " + kind + " '" + spec.name + "' of " +
           std::to_string(tensor_bytes(spec)) + " bytes");
  };
  switch (b.storage) {
    case Storage::kInput: return check_tensor(plan.inputs, "input");
    case Storage::kOutput: return check_tensor(plan.outputs, "output");
    case Storage::kWeight:
      if (!fits(b.offset, b.bytes, weights_size))
        fail(name + ": bytes [" + std::to_string(b.offset) + ", +" + std::to_string(b.bytes) +
             ") outside the weights (" + std::to_string(weights_size) + " bytes)");
      if (b.offset % 64)
        fail(name + ": weight offset " + std::to_string(b.offset) + " is not 64-byte aligned");
      return;
    case Storage::kArena:
      if (!fits(b.offset, b.bytes, plan.arena_bytes))
        fail(name + ": bytes [" + std::to_string(b.offset) + ", +" + std::to_string(b.bytes) +
             ") outside the arena (" + std::to_string(plan.arena_bytes) + " bytes)");
      if (b.offset % 64)
        fail(name + ": arena offset " + std::to_string(b.offset) + " is not 64-byte aligned");
      return;
  }
  fail(name + ": storage kind " + std::to_string(int(b.storage)) + " is not input/output/weight/arena");
}

void put_copies(Writer& w, const std::vector<LoopCopy>& copies) {
  w.put(uint32_t(copies.size()));
  for (const LoopCopy& c : copies) {
    w.put(c.from);
    w.put(c.to);
    w.put(uint8_t(c.reverse));
  }
}

// A byte that must be 0 or 1.
bool get_flag(Reader& r, const char* what) {
  uint8_t v = r.get<uint8_t>(what);
  if (v > 1) throw PlanError(std::string("corrupt model plan: ") + what + " " + std::to_string(v));
  return v == 1;
}

std::vector<LoopCopy> get_copies(Reader& r) {
  std::vector<LoopCopy> copies(r.get_count("loop copy count", 9));
  for (LoopCopy& c : copies) {
    c.from = r.get<uint32_t>("loop copy source");
    c.to = r.get<uint32_t>("loop copy destination");
    c.reverse = get_flag(r, "loop copy direction");
  }
  return copies;
}

void put_loops(Writer& w, const std::vector<Loop>& loops) {
  w.put(uint32_t(loops.size()));
  for (const Loop& l : loops) {
    w.put(l.parent);
    w.put(l.begin);
    w.put(l.end);
    w.put(l.count);
    for (const auto* copies : {&l.init, &l.slice_in, &l.slice_out, &l.carry}) put_copies(w, *copies);
    w.put(l.condition);
    w.put(uint8_t(l.run_when_true));
    w.put(l.while_condition);
  }
}

std::vector<Loop> get_loops(Reader& r) {
  std::vector<Loop> loops(r.get_count("loop count", 45));
  for (Loop& l : loops) {
    l.parent = r.get<int32_t>("loop parent");
    l.begin = r.get<uint32_t>("loop begin");
    l.end = r.get<uint32_t>("loop end");
    l.count = r.get<uint64_t>("loop count");
    for (auto* copies : {&l.init, &l.slice_in, &l.slice_out, &l.carry}) *copies = get_copies(r);
    l.condition = r.get<uint32_t>("loop condition");
    l.run_when_true = get_flag(r, "loop condition sense");
    l.while_condition = r.get<uint32_t>("loop while condition");
  }
  return loops;
}

std::string hex(uint64_t v) {
  char buf[19];
  std::snprintf(buf, sizeof(buf), "0x%016llx", static_cast<unsigned long long>(v));
  return buf;
}

void validate_step(const Plan& plan, size_t i, uint32_t kernel_count) {
  const Step& s = plan.steps[i];
  std::string name = "step " + std::to_string(i) + " '" + s.name + "'";
  if (s.kernel >= kernel_count)
    fail(name + ": kernel " + std::to_string(s.kernel) + " out of range (" + std::to_string(kernel_count) +
         " kernels)");
  if (s.args.empty()) fail(name + ": no arguments (a kernel writes at least one output)");
  for (uint32_t a : s.args)
    if (a >= plan.buffers.size())
      fail(name + ": argument buffer id " + std::to_string(a) + " out of range (" +
           std::to_string(plan.buffers.size()) + " buffers)");
  if (!std::isfinite(s.flops) || s.flops < 0 || !std::isfinite(s.bytes) || s.bytes < 0)
    fail(name + ": flops " + std::to_string(s.flops) + " and bytes " + std::to_string(s.bytes) +
         " must be finite and not negative");
  // Every call of one kernel passes buffers of the same sizes: its parameters are fixed.
  for (size_t j = 0; j < i; ++j) {
    const Step& t = plan.steps[j];
    if (t.kernel != s.kernel) continue;
    bool same = t.args.size() == s.args.size();
    for (size_t k = 0; same && k < s.args.size(); ++k)
      same = plan.buffers[t.args[k]].bytes == plan.buffers[s.args[k]].bytes;
    if (!same)
      fail(name + ": calls kernel " + std::to_string(s.kernel) + " with other arguments than step " +
           std::to_string(j) + " (count or sizes differ)");
  }
}

void validate_features(const Plan& plan) {
  for (const std::string& f : plan.cpu_features) {
    bool printable = std::all_of(f.begin(), f.end(), [](char c) { return c > ' ' && c < 0x7f; });
    if (f.empty() || f.size() > kMaxFeatureName || !printable)
      fail("CPU feature name of " + std::to_string(f.size()) + " bytes is not a feature name");
  }
}

// An output copied from another output must copy from one that is final
// after the first round of copies (its own slot or a non-output buffer).
void validate_outputs(const Plan& plan) {
  if (plan.output_buffers.size() != plan.outputs.size())
    fail(std::to_string(plan.output_buffers.size()) + " output buffers for " +
         std::to_string(plan.outputs.size()) + " outputs");
  for (size_t j = 0; j < plan.outputs.size(); ++j) {
    const std::string name = "output '" + plan.outputs[j].name + "'";
    uint32_t id = plan.output_buffers[j];
    if (id >= plan.buffers.size()) fail(name + ": buffer id " + std::to_string(id) + " out of range");
    const BufferSlot& b = plan.buffers[id];
    if (b.bytes != tensor_bytes(plan.outputs[j]))
      fail(name + ": held in buffer " + std::to_string(id) + " of " + std::to_string(b.bytes) +
           " bytes, expected " + std::to_string(tensor_bytes(plan.outputs[j])));
    if (b.storage != Storage::kOutput || b.index == j) continue;
    const BufferSlot& src = plan.buffers[plan.output_buffers[b.index]];
    if (src.storage == Storage::kOutput && src.index != b.index)
      fail(name + ": copied from output " + std::to_string(b.index) + ", itself a copy of another output");
  }
}

// Each names an output (at most once), one of its axes and a buffer of one
// int64 that is not an input's.
void validate_data_dependent(const Plan& plan) {
  std::vector<bool> named(plan.outputs.size(), false);
  for (const DataDependentDim& d : plan.data_dependent) {
    if (d.output >= plan.outputs.size() || named[d.output])
      fail("data-dependent extent of output " + std::to_string(d.output) + " (of " +
           std::to_string(plan.outputs.size()) + ", each once)");
    named[d.output] = true;
    if (d.axis >= plan.outputs[d.output].shape.size())
      fail("data-dependent axis " + std::to_string(d.axis) + " of output '" + plan.outputs[d.output].name +
           "'");
    if (d.size_buffer >= plan.buffers.size() || plan.buffers[d.size_buffer].bytes != sizeof(int64_t) ||
        plan.buffers[d.size_buffer].storage == Storage::kInput)
      fail("the size of output '" + plan.outputs[d.output].name + "' is not in a buffer of one int64");
  }
}

}  // namespace

// Indexed by tessel_dtype.
// The storage-only types (13 on) hold one code per byte.
constexpr size_t kDtypeBytes[] = {4, 2, 2, 8, 1, 1, 4, 8, 1, 2, 2, 4, 8, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
constexpr const char* kDtypeNames[] = {"f32",    "f16",      "bf16",       "f64",    "i8",         "u8",
                                       "i32",    "i64",      "bool",       "i16",    "u16",        "u32",
                                       "u64",    "f8e4m3fn", "f8e4m3fnuz", "f8e5m2", "f8e5m2fnuz", "f8e8m0",
                                       "f4e2m1", "i4",       "u4",         "i2",     "u2"};
static_assert(std::size(kDtypeBytes) == std::size(kDtypeNames));

size_t dtype_bytes(uint8_t dtype) {
  return dtype < std::size(kDtypeBytes) ? kDtypeBytes[dtype] : 0;
}

const char* dtype_name(uint8_t dtype) {
  return dtype < std::size(kDtypeNames) ? kDtypeNames[dtype] : "invalid";
}

uint64_t tensor_bytes(const TensorSpec& spec) {
  std::string name = "tensor '" + spec.name + "'";
  if (dtype_bytes(spec.dtype) == 0)
    fail(name + ": dtype " + std::to_string(int(spec.dtype)) + " is not 0.." +
         std::to_string(std::size(kDtypeBytes) - 1));
  uint64_t n = dtype_bytes(spec.dtype);
  for (int64_t d : spec.shape) {
    if (d < 0) fail(name + ": negative dimension in shape " + shape_str(spec.shape));
    if (d != 0 && n > uint64_t(std::numeric_limits<int64_t>::max()) / uint64_t(d))
      fail(name + ": shape " + shape_str(spec.shape) + " overflows 2^63 bytes");
    n *= uint64_t(d);
  }
  return n;
}

std::vector<uint8_t> serialize_plan(const Plan& plan) {
  Writer w;
  w.put_bytes(kMagic, sizeof(kMagic));
  w.put(kPlanFormatVersion);
  w.put_string(plan.model_name);
  for (const auto* specs : {&plan.inputs, &plan.outputs}) {
    w.put(uint32_t(specs->size()));
    for (const TensorSpec& s : *specs) put_spec(w, s);
  }
  w.put(uint32_t(plan.buffers.size()));
  for (const BufferSlot& b : plan.buffers) {
    w.put(uint8_t(b.storage));
    w.put(b.index);
    w.put(b.offset);
    w.put(b.bytes);
  }
  w.put(uint32_t(plan.steps.size()));
  for (const Step& s : plan.steps) {
    w.put(s.kernel);
    w.put_string(s.name);
    w.put(uint32_t(s.args.size()));
    for (uint32_t a : s.args) w.put(a);
    w.put(s.flops);
    w.put(s.bytes);
  }
  put_loops(w, plan.loops);
  w.put(uint32_t(plan.output_buffers.size()));
  for (uint32_t id : plan.output_buffers) w.put(id);
  w.put(plan.arena_bytes);
  w.put(plan.weights_bytes);
  w.put(plan.weights_checksum);
  w.put(uint32_t(plan.cpu_features.size()));
  for (const std::string& f : plan.cpu_features) w.put_string(f);
  w.put(uint32_t(plan.data_dependent.size()));
  for (const DataDependentDim& d : plan.data_dependent) {
    w.put(d.output);
    w.put(d.axis);
    w.put(d.size_buffer);
  }
  return w.take_sealed();
}

Plan deserialize_plan(const uint8_t* data, size_t size) {
  if (!data) throw PlanError("corrupt model plan: no data");
  Reader r(data, size);
  r.need(sizeof(kMagic), "the magic");
  if (std::memcmp(data, kMagic, sizeof(kMagic)) != 0)
    throw PlanError("corrupt model plan: bad magic (not TSLPLAN)");
  for (size_t i = 0; i < sizeof(kMagic); ++i) r.get<uint8_t>("the magic");
  uint32_t version = r.get<uint32_t>("the format version");
  if (version != kPlanFormatVersion)
    throw PlanError("corrupt model plan: format version " + std::to_string(version) +
                    ", this runtime reads " + std::to_string(kPlanFormatVersion));
  r.need(kChecksumBytes, "the checksum");
  size_t body = size - kChecksumBytes;
  uint64_t stored = Reader(data + body, kChecksumBytes).get<uint64_t>("the checksum");
  uint64_t actual = checksum64(data, body);
  if (stored != actual)
    throw PlanError("model data corrupt: checksum mismatch in the plan (stored " + hex(stored) +
                    ", computed " + hex(actual) + ")");
  r = Reader(data, body);
  for (size_t i = 0; i < sizeof(kMagic) + sizeof(version); ++i) r.get<uint8_t>("the header");
  Plan plan;
  plan.model_name = r.get_string("the model name");
  plan.inputs = get_specs(r, "input count");
  plan.outputs = get_specs(r, "output count");
  plan.buffers.resize(r.get_count("buffer count", 21));
  for (BufferSlot& b : plan.buffers) {
    b.storage = Storage(r.get<uint8_t>("buffer storage"));
    b.index = r.get<uint32_t>("buffer index");
    b.offset = r.get<uint64_t>("buffer offset");
    b.bytes = r.get<uint64_t>("buffer bytes");
  }
  plan.steps.resize(r.get_count("step count", 28));
  for (Step& s : plan.steps) {
    s.kernel = r.get<uint32_t>("step kernel");
    s.name = r.get_string("step name");
    s.args.resize(r.get_count("step argument count", 4));
    for (uint32_t& a : s.args) a = r.get<uint32_t>("step argument");
    s.flops = r.get<double>("step flops");
    s.bytes = r.get<double>("step bytes");
  }
  plan.loops = get_loops(r);
  plan.output_buffers.resize(r.get_count("output buffer count", 4));
  for (uint32_t& id : plan.output_buffers) id = r.get<uint32_t>("output buffer");
  plan.arena_bytes = r.get<uint64_t>("arena bytes");
  plan.weights_bytes = r.get<uint64_t>("weights bytes");
  plan.weights_checksum = r.get<uint64_t>("weights checksum");
  plan.cpu_features.resize(r.get_count("CPU feature count", 4));
  for (std::string& f : plan.cpu_features) f = r.get_string("CPU feature");
  plan.data_dependent.resize(r.get_count("data-dependent extent count", 12));
  for (DataDependentDim& d : plan.data_dependent) {
    d.output = r.get<uint32_t>("data-dependent output");
    d.axis = r.get<uint32_t>("data-dependent axis");
    d.size_buffer = r.get<uint32_t>("data-dependent size buffer");
  }
  if (r.pos() != r.size())
    throw PlanError("corrupt model plan: " + std::to_string(r.size() - r.pos()) + " trailing bytes");
  return plan;
}

void validate_plan(const Plan& plan, uint32_t kernel_count, uint64_t weights_size) {
  for (const auto* specs : {&plan.inputs, &plan.outputs})
    for (const TensorSpec& s : *specs) {
      if (s.shape.size() > kMaxRank)
        fail("tensor '" + s.name + "' of rank " + std::to_string(s.shape.size()) + " (at most " +
             std::to_string(kMaxRank) + ")");
      tensor_bytes(s);
    }
  if (plan.weights_bytes > weights_size)
    fail("the plan needs " + std::to_string(plan.weights_bytes) + " bytes of weights, the library holds " +
         std::to_string(weights_size));
  if (plan.arena_bytes > kMaxPlanBytes)
    fail("an arena of " + std::to_string(plan.arena_bytes) + " bytes (at most 2^40)");
  for (size_t id = 0; id < plan.buffers.size(); ++id) validate_slot(plan, id, plan.weights_bytes);
  for (size_t i = 0; i < plan.steps.size(); ++i) validate_step(plan, i, kernel_count);
  validate_loops(plan);
  validate_outputs(plan);
  validate_data_dependent(plan);
  validate_features(plan);
}

void verify_weights_checksum(const Plan& plan, const void* weights, uint64_t weights_size) {
  if (weights_size > 0 && !weights) throw PlanError("model data corrupt: the weights are missing");
  uint64_t actual = weights_size > 0 ? checksum64(weights, size_t(weights_size)) : checksum64("", 0);
  if (actual != plan.weights_checksum)
    throw PlanError("model data corrupt: checksum mismatch in the weights (" + std::to_string(weights_size) +
                    " bytes; stored " + hex(plan.weights_checksum) + ", computed " + hex(actual) + ")");
}

}  // namespace tessel::rt
