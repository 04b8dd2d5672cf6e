// The interpreter's compiled form of a PrimFunc (internal to interpreter*.cpp):
// variables resolved to slots, buffers to slots of a per-thread table, and
// every expression node to an opcode specialised by numeric class.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "ir/tensor/interpreter.h"

namespace tessel::tir::interp {

// One scalar. Integers and bool (0/1) live in i, wrapped to their dtype; f32,
// f16 and bf16 in f (the 16-bit types rounded only on store and cast); f64 in d.
union Value {
  int64_t i;
  double d;
  float f;
};
inline Value int_value(int64_t v) {
  Value r;
  r.i = v;
  return r;
}
inline Value float_value(float v) {
  Value r;
  r.i = 0;
  r.f = v;
  return r;
}
inline Value double_value(double v) {
  Value r;
  r.d = v;
  return r;
}

// How a dtype is computed: I (int64 then wrapped), F (float), D (double).
enum class NumClass : uint8_t { kI = 0, kF = 1, kD = 2 };
NumClass num_class(DType t);

#define TESSEL_INTERP_ARITH(X) \
  X(Add) X(Sub) X(Mul) X(Div) X(FloorDiv) X(FloorMod) X(Min) X(Max) X(BitAnd) X(BitOr) X(BitXor) X(Shl) X(Shr)
#define TESSEL_INTERP_CMP(X) X(EQ) X(NE) X(LT) X(LE) X(GT) X(GE)

// Opcodes: each arithmetic and comparison kind comes in the three classes, in
// the order I, F, D, so that `base + class` selects one, then U: u64 values,
// held in the int64 like every integer, compared and divided unsigned.
enum class EOp : uint8_t {
  kImm,
  kVar,
#define TESSEL_X(name) k##name##I, k##name##F, k##name##D, k##name##U,
  TESSEL_INTERP_ARITH(TESSEL_X) TESSEL_INTERP_CMP(TESSEL_X)
#undef TESSEL_X
      kAnd,
  kOr,
  kNot,
  kSelect,
  kCast,
  kLoad,
  kCallF,
  kCallD,
  kBitcast,
};

// A compiled expression node. Children are ids in Program::exprs.
//   kVar: a = variable slot.  binary: a, b.  kNot, kCast: a.  kSelect: a ? b : c.
//   kLoad: a = buffer slot, index ids args[b .. b + c).  kCall*: a, b = operands, aux = Intrinsic.
//   kCast, kBitcast: aux = source DType.
struct ENode {
  EOp op = EOp::kImm;
  DType dtype = DType::kI64;
  uint8_t aux = 0;
  int32_t a = -1, b = -1, c = -1;
  Value imm = int_value(0);
};

// A block's iteration variable: its slot, the id of its binding, and for
// reduction variables the id of its domain minimum.
struct IterBinding {
  int32_t slot = -1;
  int32_t value = -1;
  int32_t dom_min = -1;
  bool reduce = false;
};

// Thread tags as indices: blockIdx.x/y/z are 0..2, threadIdx.x/y/z 3..5.
int thread_tag_index(std::string_view tag);
inline constexpr int kFirstThreadIdxTag = 3;

// A compiled statement. Children are ids in Program::stmts.
struct SNode {
  StmtKind kind = StmtKind::kSeq;
  bool has_barrier = false;  // a Barrier somewhere below (or this node is one)
  std::string name;          // loop variable or block name, for messages
  // For: var slot, min, extent, kind, tag (-1 when not thread bound), body.
  int32_t var = -1, min = -1, extent = -1;
  ForKind for_kind = ForKind::kSerial;
  int8_t tag = -1;
  int32_t body = -1;
  // IfThenElse: cond, body (then), else_body (-1 when none). Block: cond is
  // the predicate (-1 when constant true), init (-1 when none), body.
  int32_t cond = -1, else_body = -1, init = -1;
  // Assert: cond, the message in `name`, the values' ids in `indices`.
  // Store: buffer slot, value, index ids; round16 is the buffer dtype when
  // it is f16 or bf16 (rounded on store), else kF32.
  int32_t buffer = -1, value = -1;
  DType round16 = DType::kF32;
  std::vector<int32_t> indices;
  std::vector<int32_t> children;   // Seq
  std::vector<IterBinding> iters;  // Block
  std::vector<int32_t> allocs;     // buffer slots allocated here (Block, Allocate)
  // blockIdx loops and outermost threadIdx loops: the shared and local
  // buffer slots used below, which get per-block / per-thread instances.
  std::vector<int32_t> scoped_buffers;
  // Outermost threadIdx loops (launch roots): (tag, extent id) of every
  // threadIdx loop below, and why the launch cannot be sized, if it cannot.
  std::vector<std::pair<int8_t, int32_t>> launch_extents;
  std::string launch_problem;
};

struct Program {
  std::vector<ENode> exprs;
  std::vector<int32_t> args;  // index lists of loads
  std::vector<SNode> stmts;
  std::vector<const BufferNode*> buffers;  // by slot
  std::vector<const VarNode*> vars;        // by slot
  std::vector<int32_t> input_slots, output_slots;
  int32_t root = -1;
};

// Compiles func; throws InterpreterError when a variable or buffer is used
// outside its scope.
Program compile_program(const PrimFuncNode& func);

// The storage of one buffer instance: every element as a Value at its
// strided offset. Tracked buffers (scratch, outputs) record which elements
// were written, and reading an unwritten one is an error.
struct BufInst {
  const BufferNode* node = nullptr;
  std::vector<Value> data;
  std::vector<uint8_t> written;  // empty when untracked
};
// A fresh tracked instance, poisoned (NaN for floats, a sentinel for integers).
std::unique_ptr<BufInst> make_scratch(const BufferNode* node);

// One GPU thread block (an iteration of a blockIdx loop, or a launch outside
// any): the shared buffer instances it owns and each thread's local ones, so
// that several thread loops below one blockIdx iteration see the same memory.
struct BlockContext {
  std::vector<std::unique_ptr<BufInst>> shared;
  std::map<std::pair<std::array<int64_t, 3>, int32_t>, std::unique_ptr<BufInst>> locals;
  BufInst* local_for(const std::array<int64_t, 3>& thread, int32_t slot, const BufferNode* node);
};

// The state one thread of execution sees: variable values, the buffer
// instance behind every slot, and in SIMT mode its thread index.
struct Env {
  std::vector<Value> vars;
  std::vector<BufInst*> bufs;
  bool in_simt = false;
  std::array<int64_t, 3> thread_idx = {0, 0, 0};
  BlockContext* block_ctx = nullptr;        // the current GPU thread block, if any
  const std::string* block_name = nullptr;  // innermost block, for messages
};

// Expression evaluation over one Env.
class Evaluator {
 public:
  Evaluator(const Program& prog, Env& env) : prog_(prog), nodes_(prog.exprs.data()), env_(env) {}
  Value eval(int32_t id) const;
  int64_t eval_int(int32_t id) const { return eval(id).i; }
  // The storage offset of buffer[index ids], checked against the shape.
  int64_t offset(const BufInst& buf, const int32_t* index_ids, int count, bool store) const;

 private:
  Value eval_load(const ENode& n) const;
  Value eval_cast(const ENode& n) const;
  const Program& prog_;
  const ENode* nodes_;
  Env& env_;
};

// Runs statements. run() executes sequentially (outside SIMT mode, or as one
// thread inside it); run_simt() runs a statement for all threads of a thread
// block with the phase semantics of interpreter.h.
class Executor {
 public:
  Executor(const Program& prog, const InterpretOptions& options);
  void run(int32_t id, Env& env);

 private:
  void run_for(const SNode& s, Env& env);
  void run_store(const SNode& s, Env& env);
  void run_block(const SNode& s, Env& env);
  void run_allocate(const SNode& s, Env& env);
  void run_assert(const SNode& s, Env& env);
  void run_block_idx_loop(const SNode& s, Env& env, int64_t lo, int64_t extent);
  // interpreter_simt.cpp
  void launch(const SNode& loop, int32_t id, Env& env);
  void run_simt(int32_t id, std::vector<Env>& threads);
  void simt_for(const SNode& s, std::vector<Env>& threads);
  void simt_if(const SNode& s, std::vector<Env>& threads);
  void simt_block(const SNode& s, std::vector<Env>& threads);
  void simt_allocate(const SNode& s, std::vector<Env>& threads);
  std::vector<size_t> phase_order(size_t count);

  const Program& prog_;
  InterpretOptions options_;
  uint64_t shuffle_state_;
};

// "X[3, 4]" for messages.
std::string element_str(const BufferNode& buffer, const int64_t* indices, int count);
[[noreturn]] void fail(const Env& env, const std::string& message);

}  // namespace tessel::tir::interp
