// The tensor IR interpreter's entry point and its sequential statement
// executor: binds the parameters, runs loops, blocks and allocations, and
// hands thread blocks to the SIMT executor (interpreter_simt.cpp).
#include "ir/tensor/interpreter.h"

#include "ir/core/diagnostics.h"
#include "ir/tensor/interpreter_program.h"

namespace tessel::tir {

namespace interp {

namespace {

// Calls f(row-major index, storage offset) for every element of buffer.
template <typename F>
void for_each_element(const BufferNode& buffer, F&& f) {
  int64_t n = buffer.num_elements();
  if (n == 0) return;
  std::vector<int64_t> index(buffer.shape.size(), 0);
  int64_t offset = 0;
  for (int64_t linear = 0; linear < n; ++linear) {
    f(linear, offset);
    for (int d = buffer.rank() - 1; d >= 0; --d) {
      offset += buffer.strides[d];
      if (++index[d] < buffer.shape[d]) break;
      offset -= index[d] * buffer.strides[d];
      index[d] = 0;
    }
  }
}

std::unique_ptr<BufInst> bind_input(const BufferNode& buffer, const Tensor& tensor) {
  if (tensor.dtype() != buffer.dtype || tensor.shape() != buffer.shape)
    throw InterpreterError("input " + buffer.name + " is " + std::string(dtype_name(buffer.dtype)) +
                           dims_str(buffer.shape) + " but the tensor given is " + tensor.type_str());
  auto buf = std::make_unique<BufInst>();
  buf->node = &buffer;
  buf->data.assign(size_t(buffer.storage_elements()), int_value(0));
  NumClass cls = num_class(buffer.dtype);
  for_each_element(buffer, [&](int64_t linear, int64_t offset) {
    Value& v = buf->data[size_t(offset)];
    if (is_small(buffer.dtype))  // the interpreter holds the code
      v = int_value(static_cast<const uint8_t*>(tensor.raw())[linear]);
    else if (cls == NumClass::kI)
      v = int_value(tensor.get_i64(linear));
    else if (cls == NumClass::kF)
      v = float_value(float(tensor.get_f64(linear)));
    else
      v = double_value(tensor.get_f64(linear));
  });
  return buf;
}

Tensor read_output(const BufInst& buf) {
  const BufferNode& buffer = *buf.node;
  Tensor out(buffer.dtype, buffer.shape);
  NumClass cls = num_class(buffer.dtype);
  for_each_element(buffer, [&](int64_t linear, int64_t offset) {
    Value v = buf.data[size_t(offset)];
    if (is_small(buffer.dtype))
      static_cast<uint8_t*>(out.raw())[linear] = uint8_t(v.i);
    else if (cls == NumClass::kI)
      out.set_i64(linear, v.i);
    else
      out.set_f64(linear, cls == NumClass::kF ? double(v.f) : v.d);
  });
  return out;
}

// Fresh instances for the buffers a block or Allocate declares, swapped into
// the environment's table for the scope and swapped back after.
class ScopedAllocs {
 public:
  ScopedAllocs(const Program& prog, const std::vector<int32_t>& slots, Env& env) : slots_(slots), env_(env) {
    for (int32_t slot : slots) {
      owned_.push_back(make_scratch(prog.buffers[slot]));
      saved_.push_back(env.bufs[slot]);
      env.bufs[slot] = owned_.back().get();
    }
  }
  ~ScopedAllocs() {
    for (size_t k = 0; k < slots_.size(); ++k) env_.bufs[slots_[k]] = saved_[k];
  }
  ScopedAllocs(const ScopedAllocs&) = delete;
  ScopedAllocs& operator=(const ScopedAllocs&) = delete;

 private:
  const std::vector<int32_t>& slots_;
  Env& env_;
  std::vector<std::unique_ptr<BufInst>> owned_;
  std::vector<BufInst*> saved_;
};

}  // namespace

Executor::Executor(const Program& prog, const InterpretOptions& options)
    : prog_(prog), options_(options), shuffle_state_(options.shuffle_seed ^ 0x9e3779b97f4a7c15ull) {}

void Executor::run(int32_t id, Env& env) {
  const SNode& s = prog_.stmts[id];
  switch (s.kind) {
    case StmtKind::kFor:
      if (s.tag >= kFirstThreadIdxTag && !env.in_simt) return launch(s, id, env);
      return run_for(s, env);
    case StmtKind::kStore: return run_store(s, env);
    case StmtKind::kSeq:
      for (int32_t c : s.children) run(c, env);
      return;
    case StmtKind::kIfThenElse:
      if (Evaluator(prog_, env).eval_int(s.cond)) return run(s.body, env);
      if (s.else_body >= 0) run(s.else_body, env);
      return;
    case StmtKind::kBarrier: return;  // outside SIMT mode all work is already ordered
    case StmtKind::kBlock: return run_block(s, env);
    case StmtKind::kAllocate: return run_allocate(s, env);
    case StmtKind::kAssert: return run_assert(s, env);
    case StmtKind::kPrefetch: return;  // compiled as an empty sequence
  }
}

// A failed assert is what the data did, not a bug of ours: a user error.
void Executor::run_assert(const SNode& s, Env& env) {
  Evaluator ev(prog_, env);
  if (ev.eval_int(s.cond)) return;
  std::vector<int64_t> values;
  for (int32_t v : s.indices) values.push_back(ev.eval_int(v));
  TESSEL_USER_ERROR(Span{}) << format_assert_message(s.name, values);
}

void Executor::run_for(const SNode& s, Env& env) {
  Evaluator ev(prog_, env);
  int64_t lo = ev.eval_int(s.min), extent = ev.eval_int(s.extent);
  Value saved = env.vars[s.var];
  if (s.tag >= kFirstThreadIdxTag) {  // in SIMT mode: this thread's index, no iteration
    int64_t t = env.thread_idx[s.tag - kFirstThreadIdxTag];
    if (t >= extent) return;
    env.vars[s.var] = int_value(lo + t);
    run(s.body, env);
    env.vars[s.var] = saved;
    return;
  }
  if (s.tag >= 0 && !env.in_simt) return run_block_idx_loop(s, env, lo, extent);
  bool reverse =
      (s.for_kind == ForKind::kParallel || s.tag >= 0) && options_.thread_order != ThreadOrder::kForward;
  Value& slot = env.vars[s.var];  // env.vars never grows while running
  for (int64_t i = 0; i < extent; ++i) {
    slot.i = lo + (reverse ? extent - 1 - i : i);
    run(s.body, env);
  }
  slot = saved;
}

// Each iteration is one GPU thread block: shared buffers declared outside get
// fresh instances for it.
void Executor::run_block_idx_loop(const SNode& s, Env& env, int64_t lo, int64_t extent) {
  bool reverse = options_.thread_order != ThreadOrder::kForward;
  Value saved = env.vars[s.var];
  BlockContext* saved_ctx = env.block_ctx;
  std::vector<BufInst*> saved_bufs = env.bufs;
  for (int64_t i = 0; i < extent; ++i) {
    BlockContext ctx;
    for (int32_t slot : s.scoped_buffers) {
      if (prog_.buffers[slot]->scope != MemScope::kShared || !saved_bufs[slot]) continue;
      ctx.shared.push_back(make_scratch(prog_.buffers[slot]));
      env.bufs[slot] = ctx.shared.back().get();
    }
    env.block_ctx = &ctx;
    env.vars[s.var] = int_value(lo + (reverse ? extent - 1 - i : i));
    run(s.body, env);
    env.block_ctx = saved_ctx;
    for (int32_t slot : s.scoped_buffers) env.bufs[slot] = saved_bufs[slot];
  }
  env.vars[s.var] = saved;
}

void Executor::run_store(const SNode& s, Env& env) {
  Evaluator ev(prog_, env);
  Value v = ev.eval(s.value);
  BufInst& buf = *env.bufs[s.buffer];
  int64_t off = ev.offset(buf, s.indices.data(), int(s.indices.size()), true);
  if (s.round16 == DType::kF16) v.f = half_to_float(float_to_half(v.f));
  if (s.round16 == DType::kBF16) v.f = bf16_to_float(float_to_bf16(v.f));
  buf.data[size_t(off)] = v;
  if (!buf.written.empty()) buf.written[size_t(off)] = 1;
}

void Executor::run_block(const SNode& s, Env& env) {
  constexpr size_t kInline = 16;
  size_t n = s.iters.size();
  Value inline_values[kInline], inline_saved[kInline];
  std::vector<Value> heap_values, heap_saved;
  Value* values = inline_values;
  Value* saved = inline_saved;
  if (n > kInline) {
    heap_values.resize(n);
    heap_saved.resize(n);
    values = heap_values.data();
    saved = heap_saved.data();
  }
  // Bindings read the enclosing loop variables: evaluate all, then bind.
  Evaluator ev(prog_, env);
  bool at_init = s.init >= 0;
  for (size_t k = 0; k < n; ++k) {
    const IterBinding& b = s.iters[k];
    values[k] = ev.eval(b.value);
    if (at_init && b.reduce) at_init = values[k].i == ev.eval_int(b.dom_min);
  }
  for (size_t k = 0; k < n; ++k) {
    saved[k] = env.vars[s.iters[k].slot];
    env.vars[s.iters[k].slot] = values[k];
  }
  if (s.cond < 0 || ev.eval_int(s.cond)) {
    const std::string* saved_name = env.block_name;
    env.block_name = &s.name;
    if (s.allocs.empty()) {
      if (at_init) run(s.init, env);
      run(s.body, env);
    } else {
      ScopedAllocs allocs(prog_, s.allocs, env);
      if (at_init) run(s.init, env);
      run(s.body, env);
    }
    env.block_name = saved_name;
  }
  for (size_t k = 0; k < n; ++k) env.vars[s.iters[k].slot] = saved[k];
}

void Executor::run_allocate(const SNode& s, Env& env) {
  ScopedAllocs allocs(prog_, s.allocs, env);
  run(s.body, env);
}

}  // namespace interp

std::vector<Tensor> interpret(const PrimFunc& func, const std::vector<Tensor>& inputs,
                              const InterpretOptions& options) {
  TESSEL_ICHECK(func.defined()) << "interpret of an undefined function";
  if (inputs.size() != func->inputs.size())
    throw InterpreterError("function " + func->name + " takes " + std::to_string(func->inputs.size()) +
                           " inputs, " + std::to_string(inputs.size()) + " given");
  interp::Program prog = interp::compile_program(*func);
  interp::Env env;
  env.vars.assign(prog.vars.size(), interp::int_value(0));
  env.bufs.assign(prog.buffers.size(), nullptr);
  std::vector<std::unique_ptr<interp::BufInst>> params;
  for (size_t k = 0; k < inputs.size(); ++k) {
    params.push_back(interp::bind_input(*func->inputs[k], inputs[k]));
    env.bufs[prog.input_slots[k]] = params.back().get();
  }
  for (int32_t slot : prog.output_slots) {
    if (env.bufs[slot]) continue;  // an output that is also an input
    params.push_back(interp::make_scratch(prog.buffers[slot]));
    env.bufs[slot] = params.back().get();
  }
  interp::Executor(prog, options).run(prog.root, env);
  std::vector<Tensor> outputs;
  for (int32_t slot : prog.output_slots) outputs.push_back(interp::read_output(*env.bufs[slot]));
  return outputs;
}

}  // namespace tessel::tir
