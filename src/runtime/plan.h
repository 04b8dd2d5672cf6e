// The execution plan a model library carries: its inputs and outputs, the
// buffer slots (inputs, outputs, weights, arena), the kernel steps in order,
// the weights' checksum and the CPU features its kernels need, and a checked
// binary form ("TSLPLAN\0", little-endian, ending in its own checksum)
// embedded in model.so.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace tessel::rt {

// An error of the runtime with the tessel_status code the C ABI reports.
class StatusError : public std::runtime_error {
 public:
  StatusError(int status, const std::string& message) : std::runtime_error(message), status_(status) {}
  int status() const { return status_; }

 private:
  int status_;
};

// A plan that fails to parse or to validate (TESSEL_ERR_CORRUPT_MODEL).
class PlanError : public StatusError {
 public:
  explicit PlanError(const std::string& message);
};

struct TensorSpec {
  std::string name;
  uint8_t dtype = 0;  // a tessel_dtype value
  std::vector<int64_t> shape;
};

enum class Storage : uint8_t { kInput, kOutput, kWeight, kArena };

struct BufferSlot {
  Storage storage = Storage::kArena;
  uint32_t index = 0;   // the input or output number (kInput, kOutput)
  uint64_t offset = 0;  // into the weights (kWeight) or the arena (kArena)
  uint64_t bytes = 0;
};

struct Step {
  uint32_t kernel = 0;  // into the kernel table
  std::string name;
  std::vector<uint32_t> args;  // buffer ids: the kernel's inputs, then its outputs
  double flops = 0;            // per run of the model: a step in a loop counts every iteration
  double bytes = 0;
};

// A copy the runtime makes around a loop's iterations (slot `from` to slot
// `to`). Sliced: one of the two is the whole stacked tensor, the other one
// slice of it, and iteration t copies slice t (count - 1 - t when reversed).
struct LoopCopy {
  uint32_t from = 0, to = 0;
  bool reverse = false;
};

// Steps [begin, end) run `count` times: a Scan of the graph (recurrent nets).
// Copies: `init` once before the first iteration (the initial states), then
// each iteration `slice_in` (whole -> slice) before the steps, `slice_out`
// (slice -> whole) and `carry` (next state -> state) after them. Loops nest:
// `parent` is an earlier loop whose steps hold this one's (-1: none);
// siblings come in the order they run, an empty loop (begin == end) at the
// position it runs.
//
// A conditional loop (an If's branch) runs its iterations only when the bool
// in buffer `condition` is `run_when_true`; its init copies run either way.
// A while loop ends before any iteration at which the bool in buffer
// `while_condition` (a state, after the carries) is false; `count` bounds it.
constexpr uint32_t kNoCondition = 0xffffffffu;

struct Loop {
  int32_t parent = -1;
  uint32_t begin = 0, end = 0;
  uint64_t count = 1;
  std::vector<LoopCopy> init, slice_in, slice_out, carry;
  uint32_t condition = kNoCondition;
  bool run_when_true = true;
  uint32_t while_condition = kNoCondition;
};

// An output whose extent along `axis` a run decides (data_dependent.h): its
// spec holds the bound, buffer `size_buffer` the int64 extent after a run.
struct DataDependentDim {
  uint32_t output = 0, axis = 0, size_buffer = 0;
};

struct Plan {
  std::string model_name;
  std::vector<TensorSpec> inputs, outputs;
  std::vector<BufferSlot> buffers;  // args of steps index into this
  std::vector<Step> steps;          // run in order
  std::vector<Loop> loops;          // steps run repeatedly, parents first
  // The buffer holding each output after the steps; when it is not that
  // output's own kOutput slot (an output that is an input, a weight, or a
  // second name of another output), the runtime copies it.
  std::vector<uint32_t> output_buffers;
  uint64_t arena_bytes = 0, weights_bytes = 0;
  // Written at export: checksum64 of the library's weights_bytes of weights,
  // and the checkable CPU features (cpu_features.h) the kernels were compiled
  // for. A plan that is never exported (the JIT's) leaves them empty.
  uint64_t weights_checksum = 0;
  std::vector<std::string> cpu_features;
  std::vector<DataDependentDim> data_dependent;
};

// 2: the weights' checksum, the CPU features and the trailing checksum.
// 3: loops. 4: data-dependent extents.
constexpr uint32_t kPlanFormatVersion = 5;
// The largest arena or weights a plan may claim (1 TiB): well beyond any
// model, far from the overflow of rounding sizes up to 64 bytes.
constexpr uint64_t kMaxPlanBytes = uint64_t(1) << 40;
// The most iterations of one loop (a sequence far beyond any model's).
constexpr uint64_t kMaxLoopCount = uint64_t(1) << 32;
// The most dimensions a tensor of a plan may have (ONNX's practical limit is far below).
constexpr size_t kMaxRank = 64;

// Bytes of one element of a tessel_dtype, 0 for a value outside 0..8.
size_t dtype_bytes(uint8_t dtype);
const char* dtype_name(uint8_t dtype);

// Bytes of a dense tensor of the spec; throws PlanError on a bad dtype, a
// negative dimension or a size over 2^63.
uint64_t tensor_bytes(const TensorSpec& spec);

// The plan's bytes, its checksum64 appended as the last 8.
std::vector<uint8_t> serialize_plan(const Plan& plan);
// Throws PlanError on anything short, corrupt or trailing, a checksum
// mismatch included (after the magic and the version, so that those are named).
Plan deserialize_plan(const uint8_t* data, size_t size);
// The plan's internal consistency, against a kernel table and weights of the
// given sizes; throws PlanError naming the first inconsistency.
void validate_plan(const Plan& plan, uint32_t kernel_count, uint64_t weights_size);
// The loops' structure and copies (part of validate_plan; plan_loops.cpp).
void validate_loops(const Plan& plan);
// Calls of each step in one run: once per iteration of its loops (a
// conditional loop counted as if it ran); and their sum.
std::vector<uint64_t> calls_per_step(const Plan& plan);
uint64_t dispatches_per_run(const Plan& plan);
// Each loop's children, in the order they run (after validate_loops); index
// loops.size() holds the top level's.
std::vector<std::vector<uint32_t>> loop_children(const Plan& plan);
// Throws PlanError ("model data corrupt: checksum mismatch ...") unless the
// weights' checksum64 is the plan's weights_checksum.
void verify_weights_checksum(const Plan& plan, const void* weights, uint64_t weights_size);

}  // namespace tessel::rt
