// Compiles a PrimFunc into the interpreter's program form: variables and
// buffers become slots (checked for scope once, here), expressions become
// opcodes specialised by numeric class, thread loops get their launch data.
#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "ir/tensor/interpreter_program.h"
#include "ir/tensor/scalar_semantics.h"

namespace tessel::tir::interp {

NumClass num_class(DType t) {
  if (t == DType::kF64) return NumClass::kD;
  if (is_float(t)) return NumClass::kF;
  return NumClass::kI;
}

int thread_tag_index(std::string_view tag) {
  for (int i = 0; i < 6; ++i)
    if (kThreadTags[i] == tag) return i;
  return -1;
}

namespace {

Value float_imm_value(double v, DType t) {
  double stored = float_stored_value(t, v);
  return t == DType::kF64 ? double_value(stored) : float_value(float(stored));
}

EOp binary_op(ExprKind kind, DType operands) {
  int c = operands == DType::kU64 ? 3 : int(num_class(operands));
  switch (kind) {
#define TESSEL_X(name) \
  case ExprKind::k##name: return EOp(int(EOp::k##name##I) + c);
    TESSEL_INTERP_ARITH(TESSEL_X)
    TESSEL_INTERP_CMP(TESSEL_X)
#undef TESSEL_X
    case ExprKind::kAnd: return EOp::kAnd;
    case ExprKind::kOr: return EOp::kOr;
    default: break;
  }
  TESSEL_ICHECK(false) << expr_kind_name(kind) << " is not binary";
  return EOp::kImm;
}

// What lies below a statement: the expressions and statements it holds.
struct SubtreeInfo {
  std::vector<std::pair<int8_t, int32_t>> thread_extents;  // threadIdx loops
  std::unordered_set<int32_t> bound_vars, used_buffers, allocated_buffers;
};

class Compiler {
 public:
  explicit Compiler(Program& prog) : prog_(prog) {}

  void bind_params(const PrimFuncNode& func) {
    for (const Buffer& b : func.inputs) prog_.input_slots.push_back(open_buffer(b.get()));
    for (const Buffer& b : func.outputs) prog_.output_slots.push_back(open_buffer(b.get()));
  }
  int32_t stmt(const Stmt& s);

 private:
  int32_t expr(const Expr& e);
  int32_t push_expr(ENode node) {
    prog_.exprs.push_back(node);
    return int32_t(prog_.exprs.size() - 1);
  }
  int32_t push_stmt(SNode node) {
    prog_.stmts.push_back(std::move(node));
    return int32_t(prog_.stmts.size() - 1);
  }
  int32_t compile_for(const ForNode& loop);
  int32_t compile_block(const BlockNode& block);
  void add_launch_data(SNode& node, int32_t body);

  int32_t open_var(const VarNode* v) {
    auto [it, fresh] = var_slots_.try_emplace(v, int32_t(prog_.vars.size()));
    if (fresh) {
      prog_.vars.push_back(v);
      var_depth_.push_back(0);
    }
    ++var_depth_[it->second];
    return it->second;
  }
  void close_var(int32_t slot) { --var_depth_[slot]; }
  int32_t open_buffer(const BufferNode* b) {
    auto [it, fresh] = buffer_slots_.try_emplace(b, int32_t(prog_.buffers.size()));
    if (fresh) {
      prog_.buffers.push_back(b);
      buffer_depth_.push_back(0);
    }
    ++buffer_depth_[it->second];
    return it->second;
  }
  void close_buffer(int32_t slot) { --buffer_depth_[slot]; }
  int32_t buffer_in_scope(const BufferNode* b) {
    auto it = buffer_slots_.find(b);
    if (it == buffer_slots_.end() || buffer_depth_[it->second] == 0)
      throw InterpreterError("buffer " + b->name +
                             " is used but is neither a parameter nor allocated around the use");
    return it->second;
  }

  Program& prog_;
  std::unordered_map<const VarNode*, int32_t> var_slots_;
  std::vector<int> var_depth_;
  std::unordered_map<const BufferNode*, int32_t> buffer_slots_;
  std::vector<int> buffer_depth_;
  int thread_idx_depth_ = 0;
};

int32_t Compiler::expr(const Expr& e) {
  ENode n;
  n.dtype = e->dtype;
  switch (e->kind) {
    case ExprKind::kIntImm: n.imm = int_value(wrap_to(e->dtype, e.as<IntImmNode>()->value)); break;
    case ExprKind::kFloatImm: n.imm = float_imm_value(e.as<FloatImmNode>()->value, e->dtype); break;
    case ExprKind::kVar: {
      const VarNode* v = e.as<VarNode>();
      auto it = var_slots_.find(v);
      if (it == var_slots_.end() || var_depth_[it->second] == 0)
        throw InterpreterError("variable " + v->name + " is used outside the loop or block that binds it");
      n.op = EOp::kVar;
      n.a = it->second;
      break;
    }
    case ExprKind::kNot:
      n.op = EOp::kNot;
      n.a = expr(e.as<NotNode>()->a);
      break;
    case ExprKind::kSelect: {
      const SelectNode* s = e.as<SelectNode>();
      n.op = EOp::kSelect;
      n.a = expr(s->cond);
      n.b = expr(s->true_value);
      n.c = expr(s->false_value);
      break;
    }
    case ExprKind::kCast:
      n.op = EOp::kCast;
      n.aux = uint8_t(e.as<CastNode>()->value->dtype);
      n.a = expr(e.as<CastNode>()->value);
      break;
    case ExprKind::kLoad: {
      const LoadNode* l = e.as<LoadNode>();
      std::vector<int32_t> ids;
      for (const Expr& i : l->indices) ids.push_back(expr(i));
      n.op = EOp::kLoad;
      n.a = buffer_in_scope(l->buffer.get());
      n.b = int32_t(prog_.args.size());
      n.c = int32_t(ids.size());
      prog_.args.insert(prog_.args.end(), ids.begin(), ids.end());
      break;
    }
    case ExprKind::kCall: {
      const CallNode* c = e.as<CallNode>();
      if (c->op == Intrinsic::k_bitcast) {
        n.op = EOp::kBitcast;
        n.aux = uint8_t(c->args[0]->dtype);
        n.a = expr(c->args[0]);
        break;
      }
      n.op = num_class(c->args[0]->dtype) == NumClass::kD ? EOp::kCallD : EOp::kCallF;
      n.aux = uint8_t(c->op);
      n.a = expr(c->args[0]);
      if (c->args.size() > 1) n.b = expr(c->args[1]);
      break;
    }
    default: {
      const Expr& a = binary_a(*e);
      n.op = binary_op(e->kind, a->dtype);
      n.a = expr(a);
      n.b = expr(binary_b(*e));
      break;
    }
  }
  return push_expr(n);
}

int32_t Compiler::stmt(const Stmt& s) {
  SNode n;
  n.kind = s->kind;
  switch (s->kind) {
    case StmtKind::kFor: return compile_for(*s.as<ForNode>());
    case StmtKind::kBlock: return compile_block(*s.as<BlockNode>());
    case StmtKind::kStore: {
      const StoreNode* st = s.as<StoreNode>();
      n.buffer = buffer_in_scope(st->buffer.get());
      n.value = expr(st->value);
      for (const Expr& i : st->indices) n.indices.push_back(expr(i));
      DType t = st->buffer->dtype;
      if (t == DType::kF16 || t == DType::kBF16) n.round16 = t;
      break;
    }
    case StmtKind::kAllocate: {
      const AllocateNode* a = s.as<AllocateNode>();
      n.allocs.push_back(open_buffer(a->buffer.get()));
      n.body = stmt(a->body);
      close_buffer(n.allocs[0]);
      n.has_barrier = prog_.stmts[n.body].has_barrier;
      break;
    }
    case StmtKind::kIfThenElse: {
      const IfThenElseNode* i = s.as<IfThenElseNode>();
      n.cond = expr(i->cond);
      n.body = stmt(i->then_case);
      n.has_barrier = prog_.stmts[n.body].has_barrier;
      if (i->else_case.defined()) {
        n.else_body = stmt(i->else_case);
        n.has_barrier |= prog_.stmts[n.else_body].has_barrier;
      }
      break;
    }
    case StmtKind::kSeq:
      for (const Stmt& c : s.as<SeqNode>()->stmts) {
        n.children.push_back(stmt(c));
        n.has_barrier |= prog_.stmts[n.children.back()].has_barrier;
      }
      break;
    case StmtKind::kBarrier: n.has_barrier = true; break;
    case StmtKind::kPrefetch: n.kind = StmtKind::kSeq; break;  // a hint only: runs as nothing
    case StmtKind::kAssert: {
      const AssertNode* a = s.as<AssertNode>();
      n.cond = expr(a->cond);
      n.name = a->message;
      for (const Expr& v : a->values) n.indices.push_back(expr(v));
      break;
    }
  }
  return push_stmt(std::move(n));
}

int32_t Compiler::compile_for(const ForNode& loop) {
  SNode n;
  n.kind = StmtKind::kFor;
  n.name = loop.var->name;
  n.min = expr(loop.min);
  n.extent = expr(loop.extent);
  n.for_kind = loop.for_kind;
  n.tag = int8_t(loop.for_kind == ForKind::kThreadBound ? thread_tag_index(loop.thread_tag) : -1);
  bool thread_idx = n.tag >= kFirstThreadIdxTag;
  n.var = open_var(loop.var.get());
  thread_idx_depth_ += thread_idx;
  n.body = stmt(loop.body);
  thread_idx_depth_ -= thread_idx;
  close_var(n.var);
  n.has_barrier = prog_.stmts[n.body].has_barrier;
  bool launch_root = thread_idx && thread_idx_depth_ == 0;
  if (launch_root || (n.tag >= 0 && !thread_idx)) add_launch_data(n, n.body);
  if (launch_root) n.launch_extents.insert(n.launch_extents.begin(), {n.tag, n.extent});
  return push_stmt(std::move(n));
}

int32_t Compiler::compile_block(const BlockNode& block) {
  SNode n;
  n.kind = StmtKind::kBlock;
  n.name = block.name;
  TESSEL_ICHECK(block.iter_values.size() == block.iter_vars.size())
      << "block " << block.name << " binds " << block.iter_values.size() << " of " << block.iter_vars.size()
      << " iteration variables";
  for (size_t k = 0; k < block.iter_vars.size(); ++k) {
    IterBinding b;
    b.value = expr(block.iter_values[k]);
    b.reduce = block.iter_vars[k].kind == IterKind::kReduce;
    if (b.reduce) b.dom_min = expr(block.iter_vars[k].dom.min);
    n.iters.push_back(b);
  }
  for (size_t k = 0; k < block.iter_vars.size(); ++k)
    n.iters[k].slot = open_var(block.iter_vars[k].var.get());
  if (!is_const_int(block.predicate, 1)) n.cond = expr(block.predicate);
  for (const Buffer& b : block.alloc_buffers) n.allocs.push_back(open_buffer(b.get()));
  if (block.init.defined()) n.init = stmt(block.init);
  n.body = stmt(block.body);
  for (int32_t slot : n.allocs) close_buffer(slot);
  for (const IterBinding& b : n.iters) close_var(b.slot);
  n.has_barrier = prog_.stmts[n.body].has_barrier || (n.init >= 0 && prog_.stmts[n.init].has_barrier);
  return push_stmt(std::move(n));
}

// Walks everything below `root` with explicit work lists (no recursion).
SubtreeInfo collect_subtree(const Program& prog, int32_t root) {
  SubtreeInfo info;
  std::vector<int32_t> stmts = {root}, exprs;
  auto push = [](std::vector<int32_t>& list, int32_t id) {
    if (id >= 0) list.push_back(id);
  };
  while (!stmts.empty()) {
    const SNode& s = prog.stmts[stmts.back()];
    stmts.pop_back();
    for (int32_t id : {s.min, s.extent, s.cond, s.value}) push(exprs, id);
    for (int32_t id : s.indices) push(exprs, id);
    for (const IterBinding& b : s.iters) {
      push(exprs, b.value);
      push(exprs, b.dom_min);
      info.bound_vars.insert(b.slot);
    }
    for (int32_t id : {s.body, s.else_body, s.init}) push(stmts, id);
    for (int32_t id : s.children) push(stmts, id);
    if (s.kind == StmtKind::kFor) info.bound_vars.insert(s.var);
    if (s.tag >= kFirstThreadIdxTag) info.thread_extents.push_back({s.tag, s.extent});
    if (s.buffer >= 0) info.used_buffers.insert(s.buffer);
    info.allocated_buffers.insert(s.allocs.begin(), s.allocs.end());
  }
  while (!exprs.empty()) {
    const ENode& e = prog.exprs[exprs.back()];
    exprs.pop_back();
    if (e.op == EOp::kVar) continue;
    if (e.op == EOp::kLoad) {
      info.used_buffers.insert(e.a);
      for (int32_t k = 0; k < e.c; ++k) exprs.push_back(prog.args[e.b + k]);
      continue;
    }
    for (int32_t id : {e.a, e.b, e.c}) push(exprs, id);
  }
  return info;
}

void collect_vars(const Program& prog, int32_t root, std::unordered_set<int32_t>& vars) {
  std::vector<int32_t> work = {root};
  while (!work.empty()) {
    const ENode& e = prog.exprs[work.back()];
    work.pop_back();
    if (e.op == EOp::kVar) {
      vars.insert(e.a);
    } else if (e.op == EOp::kLoad) {
      for (int32_t k = 0; k < e.c; ++k) work.push_back(prog.args[e.b + k]);
    } else {
      for (int32_t id : {e.a, e.b, e.c})
        if (id >= 0) work.push_back(id);
    }
  }
}

// For blockIdx loops and launch roots: which shared/local buffers allocated
// outside get instances per block / per thread; for launch roots also the
// extents that size the launch (they may only use variables bound outside).
void Compiler::add_launch_data(SNode& node, int32_t body) {
  SubtreeInfo info = collect_subtree(prog_, body);
  for (int32_t slot : info.used_buffers) {
    MemScope scope = prog_.buffers[slot]->scope;
    if (scope != MemScope::kGlobal && !info.allocated_buffers.count(slot))
      node.scoped_buffers.push_back(slot);
  }
  std::sort(node.scoped_buffers.begin(), node.scoped_buffers.end());
  if (node.tag < kFirstThreadIdxTag) return;
  node.launch_extents = info.thread_extents;
  for (const auto& [tag, extent] : info.thread_extents) {
    std::unordered_set<int32_t> used;
    collect_vars(prog_, extent, used);
    for (int32_t v : used)
      if (info.bound_vars.count(v) || v == node.var)
        node.launch_problem = "the extent of a " + std::string(kThreadTags[tag]) + " loop below loop " +
                              node.name + " depends on variable " + prog_.vars[v]->name +
                              ", which is bound inside the thread block";
  }
}

}  // namespace

Program compile_program(const PrimFuncNode& func) {
  Program prog;
  Compiler compiler(prog);
  compiler.bind_params(func);
  prog.root = compiler.stmt(func.body);
  return prog;
}

}  // namespace tessel::tir::interp
