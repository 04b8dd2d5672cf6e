// Thread-block execution for the interpreter ("loop fission at barriers"): a
// statement without a barrier runs to completion for each thread in turn; a
// statement with one runs its parts across all threads, part after part, with
// loop bounds and conditions that must agree across threads.
#include <algorithm>

#include "ir/tensor/interpreter_program.h"

namespace tessel::tir::interp {

namespace {

// More threads than any GPU runs in one block by far; beyond it a schedule is
// broken and would only exhaust memory here.
constexpr int64_t kMaxThreadsPerBlock = int64_t(1) << 16;

std::string thread_str(const Env& t) {
  return "thread (" + std::to_string(t.thread_idx[0]) + ", " + std::to_string(t.thread_idx[1]) + ", " +
         std::to_string(t.thread_idx[2]) + ")";
}

// The value of expression id, which must be the same in every thread.
int64_t uniform_int(const Program& prog, int32_t id, std::vector<Env>& threads, const std::string& what) {
  int64_t first = Evaluator(prog, threads[0]).eval_int(id);
  for (size_t t = 1; t < threads.size(); ++t) {
    int64_t v = Evaluator(prog, threads[t]).eval_int(id);
    if (v != first)
      fail(threads[0], "divergent barrier: " + what + " is " + std::to_string(first) + " in " +
                           thread_str(threads[0]) + " but " + std::to_string(v) + " in " +
                           thread_str(threads[t]));
  }
  return first;
}

// Buffers declared inside a thread block by a statement that contains a
// barrier: shared and global ones are one instance for the block, local ones
// one per thread. Swapped into each thread's table for the scope.
class SimtAllocs {
 public:
  SimtAllocs(const Program& prog, const std::vector<int32_t>& slots, std::vector<Env>& threads)
      : slots_(slots), threads_(threads) {
    for (int32_t slot : slots) {
      const BufferNode* node = prog.buffers[slot];
      BufInst* block_wide = nullptr;
      if (node->scope != MemScope::kLocal) {
        owned_.push_back(make_scratch(node));
        block_wide = owned_.back().get();
      }
      for (Env& t : threads) {
        saved_.push_back(t.bufs[slot]);
        if (!block_wide) owned_.push_back(make_scratch(node));
        t.bufs[slot] = block_wide ? block_wide : owned_.back().get();
      }
    }
  }
  ~SimtAllocs() {
    size_t k = 0;
    for (int32_t slot : slots_)
      for (Env& t : threads_) t.bufs[slot] = saved_[k++];
  }
  SimtAllocs(const SimtAllocs&) = delete;
  SimtAllocs& operator=(const SimtAllocs&) = delete;

 private:
  const std::vector<int32_t>& slots_;
  std::vector<Env>& threads_;
  std::vector<std::unique_ptr<BufInst>> owned_;
  std::vector<BufInst*> saved_;
};

uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

}  // namespace

BufInst* BlockContext::local_for(const std::array<int64_t, 3>& thread, int32_t slot, const BufferNode* node) {
  std::unique_ptr<BufInst>& inst = locals[{thread, slot}];
  if (!inst) inst = make_scratch(node);
  return inst.get();
}

std::vector<size_t> Executor::phase_order(size_t count) {
  std::vector<size_t> order(count);
  for (size_t t = 0; t < count; ++t) order[t] = t;
  if (options_.thread_order == ThreadOrder::kReverse) std::reverse(order.begin(), order.end());
  if (options_.thread_order == ThreadOrder::kShuffled)
    for (size_t t = count; t > 1; --t) std::swap(order[t - 1], order[splitmix64(shuffle_state_) % t]);
  return order;
}

// Starts a thread block at the outermost threadIdx loop: sizes it by the
// largest extent per tag below, gives each thread its own environment (and
// local buffers), then runs the loop in SIMT mode.
void Executor::launch(const SNode& loop, int32_t id, Env& env) {
  if (!loop.launch_problem.empty()) fail(env, loop.launch_problem);
  Evaluator ev(prog_, env);
  std::array<int64_t, 3> extents = {1, 1, 1};
  bool seen[3] = {false, false, false};
  for (const auto& [tag, extent_id] : loop.launch_extents) {
    int t = tag - kFirstThreadIdxTag;
    int64_t e = std::max<int64_t>(0, ev.eval_int(extent_id));
    extents[t] = seen[t] ? std::max(extents[t], e) : e;
    seen[t] = true;
  }
  int64_t total = extents[0] * extents[1] * extents[2];
  if (total == 0) return;
  if (total > kMaxThreadsPerBlock)
    fail(env, "thread block of " + std::to_string(total) + " threads at loop " + loop.name + " is too large");
  // Outside any blockIdx loop this launch is the whole thread block.
  std::unique_ptr<BlockContext> own_ctx;
  BlockContext* ctx = env.block_ctx;
  std::vector<BufInst*> bufs = env.bufs;
  if (!ctx) {
    own_ctx = std::make_unique<BlockContext>();
    ctx = own_ctx.get();
    for (int32_t slot : loop.scoped_buffers) {
      if (prog_.buffers[slot]->scope != MemScope::kShared || !bufs[slot]) continue;
      ctx->shared.push_back(make_scratch(prog_.buffers[slot]));
      bufs[slot] = ctx->shared.back().get();
    }
  }
  std::vector<Env> threads(static_cast<size_t>(total));
  size_t k = 0;
  for (int64_t z = 0; z < extents[2]; ++z)
    for (int64_t y = 0; y < extents[1]; ++y)
      for (int64_t x = 0; x < extents[0]; ++x) {
        Env& t = threads[k++];
        t.vars = env.vars;
        t.bufs = bufs;
        t.in_simt = true;
        t.thread_idx = {x, y, z};
        t.block_ctx = ctx;
        t.block_name = env.block_name;
        for (int32_t slot : loop.scoped_buffers)
          if (prog_.buffers[slot]->scope == MemScope::kLocal && bufs[slot])
            t.bufs[slot] = ctx->local_for(t.thread_idx, slot, prog_.buffers[slot]);
      }
  run_simt(id, threads);
}

void Executor::run_simt(int32_t id, std::vector<Env>& threads) {
  const SNode& s = prog_.stmts[id];
  if (!s.has_barrier) {
    for (size_t t : phase_order(threads.size())) run(id, threads[t]);
    return;
  }
  switch (s.kind) {
    case StmtKind::kSeq:
      for (int32_t c : s.children) run_simt(c, threads);
      return;
    case StmtKind::kBarrier: return;  // the boundary between two parts
    case StmtKind::kFor: return simt_for(s, threads);
    case StmtKind::kIfThenElse: return simt_if(s, threads);
    case StmtKind::kBlock: return simt_block(s, threads);
    case StmtKind::kAllocate: return simt_allocate(s, threads);
    case StmtKind::kStore:
    case StmtKind::kAssert:
    case StmtKind::kPrefetch: break;
  }
  TESSEL_ICHECK(false) << "a " << stmt_kind_name(s.kind) << " cannot contain a barrier";
}

void Executor::simt_for(const SNode& s, std::vector<Env>& threads) {
  std::vector<Value> saved;
  for (Env& t : threads) saved.push_back(t.vars[s.var]);
  if (s.tag >= kFirstThreadIdxTag) {
    for (Env& t : threads) {
      Evaluator ev(prog_, t);
      int64_t lo = ev.eval_int(s.min), extent = ev.eval_int(s.extent);
      int64_t idx = t.thread_idx[s.tag - kFirstThreadIdxTag];
      if (idx >= extent)
        fail(t, "divergent barrier: " + thread_str(t) + " skips loop " + s.name + " (extent " +
                    std::to_string(extent) + " of the thread block's " + std::string(kThreadTags[s.tag]) +
                    ") which contains a barrier");
      t.vars[s.var] = int_value(lo + idx);
    }
    run_simt(s.body, threads);
  } else {
    int64_t lo = uniform_int(prog_, s.min, threads, "the start of loop " + s.name);
    int64_t extent = uniform_int(prog_, s.extent, threads, "the extent of loop " + s.name);
    bool reverse = s.for_kind == ForKind::kParallel && options_.thread_order != ThreadOrder::kForward;
    for (int64_t i = 0; i < extent; ++i) {
      for (Env& t : threads) t.vars[s.var] = int_value(lo + (reverse ? extent - 1 - i : i));
      run_simt(s.body, threads);
    }
  }
  for (size_t t = 0; t < threads.size(); ++t) threads[t].vars[s.var] = saved[t];
}

void Executor::simt_if(const SNode& s, std::vector<Env>& threads) {
  if (uniform_int(prog_, s.cond, threads, "the condition of an if")) return run_simt(s.body, threads);
  if (s.else_body >= 0) run_simt(s.else_body, threads);
}

void Executor::simt_block(const SNode& s, std::vector<Env>& threads) {
  std::vector<Value> saved;
  std::vector<int64_t> at_init(threads.size(), s.init >= 0);
  for (size_t t = 0; t < threads.size(); ++t) {
    Evaluator ev(prog_, threads[t]);
    std::vector<Value> values;
    for (const IterBinding& b : s.iters) {
      values.push_back(ev.eval(b.value));
      if (at_init[t] && b.reduce) at_init[t] = values.back().i == ev.eval_int(b.dom_min);
    }
    for (size_t k = 0; k < s.iters.size(); ++k) {
      saved.push_back(threads[t].vars[s.iters[k].slot]);
      threads[t].vars[s.iters[k].slot] = values[k];
    }
  }
  bool run_init = at_init[0];
  for (size_t t = 1; t < threads.size(); ++t)
    if (at_init[t] != at_init[0])
      fail(threads[0], "divergent barrier: block " + s.name + " runs its init in only some threads");
  if (s.cond < 0 || uniform_int(prog_, s.cond, threads, "the predicate of block " + s.name)) {
    std::vector<const std::string*> saved_names;
    for (Env& t : threads) {
      saved_names.push_back(t.block_name);
      t.block_name = &s.name;
    }
    {
      SimtAllocs allocs(prog_, s.allocs, threads);
      if (run_init) run_simt(s.init, threads);
      run_simt(s.body, threads);
    }
    for (size_t t = 0; t < threads.size(); ++t) threads[t].block_name = saved_names[t];
  }
  size_t k = 0;
  for (Env& t : threads)
    for (const IterBinding& b : s.iters) t.vars[b.slot] = saved[k++];
}

void Executor::simt_allocate(const SNode& s, std::vector<Env>& threads) {
  SimtAllocs allocs(prog_, s.allocs, threads);
  run_simt(s.body, threads);
}

}  // namespace tessel::tir::interp
