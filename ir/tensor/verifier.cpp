// Verifier of the tensor IR (see verifier.h): one walk over the function that keeps the
// variables, buffers and thread bindings in scope and records every problem it meets.
#include "ir/tensor/verifier.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "ir/core/diagnostics.h"
#include "ir/tensor/access_region.h"
#include "ir/tensor/functor.h"
#include "ir/tensor/printer.h"
#include "ir/tensor/structural.h"

namespace tessel::tir {

namespace {

std::string quoted(const std::string& name) {
  return "'" + name + "'";
}
std::string dtype_str(const Expr& e) {
  return e.defined() ? std::string(dtype_name(e->dtype)) : "nothing";
}

bool contains_barrier(const Stmt& s) {
  bool found = false;
  walk(s, [&](const Stmt& x) {
    found = found || x->kind == StmtKind::kBarrier;
    return !found;
  });
  return found;
}

// A load or store whose index count is not its buffer's rank (region detection would misread it).
bool has_rank_mismatch(const Stmt& s) {
  bool found = false;
  walk(s, [&](const Stmt& x) {
    const StoreNode* st = x.as<StoreNode>();
    found = found || (st && int(st->indices.size()) != st->buffer->rank());
    return !found;
  });
  if (!found)
    walk_exprs(s, [&](const Expr& e) {
      const LoadNode* l = e.as<LoadNode>();
      found = found || (l && int(l->indices.size()) != l->buffer->rank());
    });
  return found;
}

bool same_extent(const Expr& a, const Expr& b) {
  const int64_t *x = as_const_int(a), *y = as_const_int(b);
  if (x && y) return *x == *y;
  return structural_equal(a, b);
}

class Verifier {
 public:
  explicit Verifier(const VerifyOptions& options) : options_(options) {}

  std::vector<std::string> run(const PrimFuncNode& f) {
    frames_.push_back({"function " + quoted(f.name), {}});
    for (const Buffer& b : f.params())
      if (buffers_[b.get()]++) report("buffer " + quoted(b->name) + " is a parameter twice");
    root_ = f.body.get();
    stmt(f.body);
    return std::move(problems_);
  }

 private:
  // Variables visible in one block's body (its iteration variables and the loops inside it);
  // the function level is the outermost frame.
  struct Frame {
    std::string owner;
    std::unordered_set<const VarNode*> vars;
  };
  struct ThreadBinding {
    std::string tag;
    Expr extent;
  };

  void report(std::string message) {
    if (seen_.insert(message).second) problems_.push_back(std::move(message));
  }

  // ---- Expressions
  void use_var(const VarNode& v) {
    if (frames_.back().vars.count(&v)) return;
    bool outer =
        std::any_of(frames_.begin(), frames_.end() - 1, [&](const Frame& f) { return f.vars.count(&v); });
    if (!binding_context_.empty()) {
      report(binding_context_ + " uses " + quoted(v.name) + ", which is not a loop variable in scope");
    } else if (outer) {
      report(frames_.back().owner + " uses variable " + quoted(v.name) +
             " from outside the block (its body and init may use only its iteration variables)");
    } else {
      report("variable " + quoted(v.name) + " is used but not defined (in " + frames_.back().owner + ")");
    }
  }

  void use_buffer(const Buffer& b) {
    if (buffers_.count(b.get()) && buffers_[b.get()] > 0) return;
    report("buffer " + quoted(b->name) + " is used but is neither a parameter nor allocated in scope");
  }

  void indices(const char* what, const Buffer& b, const std::vector<Expr>& idx) {
    use_buffer(b);
    if (int(idx.size()) != b->rank()) {
      report(std::string(what) + " " + quoted(b->name) + " with " + std::to_string(idx.size()) +
             " indices, rank " + std::to_string(b->rank()));
      return;
    }
    for (int d = 0; d < b->rank(); ++d) {
      index_expr(idx[d], "index of " + quoted(b->name));
      const int64_t* c = as_const_int(idx[d]);
      if (c && (*c < 0 || *c >= b->shape[d]))
        report("index " + std::to_string(*c) + " of " + quoted(b->name) + " dimension " + std::to_string(d) +
               " is out of bounds [0, " + std::to_string(b->shape[d]) + ")");
    }
  }

  void index_expr(const Expr& e, const std::string& what) {
    expr(e);
    if (e.defined() && e->dtype != kIndexType) report(what + " is " + dtype_str(e) + ", not i64");
  }

  void bool_expr(const Expr& e, const std::string& what) {
    expr(e);
    if (e.defined() && e->dtype != DType::kBool) report(what + " is " + dtype_str(e) + ", not bool");
  }

  void expr(const Expr& e) {
    if (!e.defined()) return report("undefined expression in " + frames_.back().owner);
    const ExprNode& n = *e;
    if (is_binary(n.kind)) return binary(n);
    switch (n.kind) {
      case ExprKind::kIntImm:
        if (!is_integer(n.dtype) && n.dtype != DType::kBool && !is_small(n.dtype))
          report("integer constant of dtype " + dtype_str(e));
        return;
      case ExprKind::kFloatImm:
        if (!is_float(n.dtype)) report("float constant of dtype " + dtype_str(e));
        return;
      case ExprKind::kVar: return use_var(static_cast<const VarNode&>(n));
      case ExprKind::kNot: return bool_expr(static_cast<const NotNode&>(n).a, "operand of !");
      case ExprKind::kSelect: {
        const auto& s = static_cast<const SelectNode&>(n);
        bool_expr(s.cond, "select condition");
        expr(s.true_value);
        expr(s.false_value);
        if (dtype_str(s.true_value) != dtype_str(e) || dtype_str(s.false_value) != dtype_str(e))
          report("select of " + dtype_str(s.true_value) + " and " + dtype_str(s.false_value));
        return;
      }
      case ExprKind::kCast: return expr(static_cast<const CastNode&>(n).value);
      case ExprKind::kLoad: {
        const auto& l = static_cast<const LoadNode&>(n);
        indices("load of", l.buffer, l.indices);
        if (n.dtype != l.buffer->dtype)
          report("load of " + quoted(l.buffer->name) + " typed " + dtype_str(e));
        return;
      }
      case ExprKind::kCall: return call(static_cast<const CallNode&>(n));
      default: return;
    }
  }

  void binary(const ExprNode& n) {
    const Expr &a = binary_a(n), &b = binary_b(n);
    expr(a);
    expr(b);
    if (!a.defined() || !b.defined()) return;
    std::string name(expr_kind_name(n.kind));
    if (a->dtype != b->dtype) return report(name + " of " + dtype_str(a) + " and " + dtype_str(b));
    bool logical = n.kind == ExprKind::kAnd || n.kind == ExprKind::kOr;
    if (logical && a->dtype != DType::kBool) report(name + " of " + dtype_str(a) + ", not bool");
    DType result = is_comparison(n.kind) || logical ? DType::kBool : a->dtype;
    if (n.dtype != result)
      report(name + " typed " + std::string(dtype_name(n.dtype)) + ", expected " +
             std::string(dtype_name(result)));
  }

  void call(const CallNode& c) {
    std::string name(intrinsic_name(c.op));
    if (int(c.args.size()) != intrinsic_arity(c.op))
      report(name + " with " + std::to_string(c.args.size()) + " arguments");
    for (const Expr& arg : c.args) {
      expr(arg);
      if (c.op == Intrinsic::k_bitcast) {
        if (arg.defined() && !bitcast_allowed(arg->dtype, c.dtype))
          report("bitcast of " + dtype_str(arg) + " to " + std::string(dtype_name(c.dtype)));
      } else if (arg.defined() && !is_float(arg->dtype)) {
        report(name + " of " + dtype_str(arg));
      }
    }
  }

  // ---- Statements
  void define_var(const Var& v, const std::string& what) {
    if (v->dtype != kIndexType)
      report(what + " " + quoted(v->name) + " is " + std::string(dtype_name(v->dtype)) + ", not i64");
    if (!on_path_.insert(v.get()).second)
      report("variable " + quoted(v->name) + " is defined twice on one path");
    frames_.back().vars.insert(v.get());
  }
  void undefine_var(const Var& v) {
    on_path_.erase(v.get());
    frames_.back().vars.erase(v.get());
    thread_varying_.erase(v.get());
  }

  bool varies_by_thread(const Expr& e) const {
    if (thread_varying_.empty() || !e.defined()) return false;
    bool found = false;
    walk_exprs(e, [&](const Expr& x) {
      const VarNode* v = x.as<VarNode>();
      found = found || (v && thread_varying_.count(v));
    });
    return found;
  }

  void stmt(const Stmt& s) {
    if (!s.defined()) return report("undefined statement in " + frames_.back().owner);
    switch (s->kind) {
      case StmtKind::kFor: return loop(static_cast<const ForNode&>(*s));
      case StmtKind::kStore: {
        const auto& st = static_cast<const StoreNode&>(*s);
        indices("store to", st.buffer, st.indices);
        expr(st.value);
        if (st.value.defined() && st.value->dtype != st.buffer->dtype)
          report("store of " + dtype_str(st.value) + " to " + quoted(st.buffer->name) + " (" +
                 std::string(dtype_name(st.buffer->dtype)) + ")");
        return;
      }
      case StmtKind::kAllocate: {
        const auto& a = static_cast<const AllocateNode&>(*s);
        ++buffers_[a.buffer.get()];
        stmt(a.body);
        --buffers_[a.buffer.get()];
        return;
      }
      case StmtKind::kIfThenElse: {
        const auto& n = static_cast<const IfThenElseNode&>(*s);
        bool_expr(n.cond, "if condition");
        if (varies_by_thread(n.cond) && (contains_barrier(n.then_case) || contains_barrier(n.else_case)))
          report("barrier under a thread-dependent condition " + quoted(to_string(n.cond)));
        stmt(n.then_case);
        if (n.else_case.defined()) stmt(n.else_case);
        return;
      }
      case StmtKind::kSeq:
        for (const Stmt& c : static_cast<const SeqNode&>(*s).stmts) stmt(c);
        return;
      case StmtKind::kBarrier: return;
      case StmtKind::kBlock: return block(static_cast<const BlockNode&>(*s));
      case StmtKind::kAssert: return assertion(static_cast<const AssertNode&>(*s));
      case StmtKind::kPrefetch: {
        const auto& p = static_cast<const PrefetchNode&>(*s);
        use_buffer(p.buffer);
        index_expr(p.offset, "prefetch offset into " + quoted(p.buffer->name));
        if (p.lines <= 0)
          report("prefetch of " + std::to_string(p.lines) + " lines of " + quoted(p.buffer->name));
        return;
      }
    }
  }

  // A condition, and integer values as many as the message's "{}"s.
  void assertion(const AssertNode& a) {
    bool_expr(a.cond, "assert condition");
    size_t holes = 0;
    for (size_t at = a.message.find("{}"); at != std::string::npos; at = a.message.find("{}", at + 2))
      ++holes;
    if (holes != a.values.size())
      report("assert " + quoted(a.message) + " has " + std::to_string(holes) + " {} for " +
             std::to_string(a.values.size()) + " values");
    for (const Expr& v : a.values) {
      expr(v);
      if (v.defined() && !is_integer(v->dtype))
        report("assert value " + quoted(to_string(v)) + " is " + dtype_str(v));
    }
  }

  void loop_kind(const ForNode& f) {
    std::string name = "loop " + quoted(f.var->name);
    if (f.for_kind != ForKind::kThreadBound && !f.thread_tag.empty())
      report(name + " has thread tag " + f.thread_tag + " but kind " +
             std::string(for_kind_name(f.for_kind)));
    if (f.for_kind == ForKind::kParallel && !options_.allow_parallel)
      report("parallel " + name + " where the target allows no parallel loops");
    if (f.for_kind == ForKind::kVectorized && !as_const_int(f.extent))
      report("vectorized " + name + " has a non-constant extent");
    if (f.for_kind != ForKind::kThreadBound) return;
    if (!options_.allow_thread_bindings)
      report(name + " is bound to " + f.thread_tag + ", but the target allows no thread bindings");
    if (!is_thread_tag(f.thread_tag))
      report(name + " is bound to unknown thread tag " + quoted(f.thread_tag));
    for (const ThreadBinding& outer : threads_)
      if (outer.tag == f.thread_tag && !same_extent(outer.extent, f.extent))
        report(f.thread_tag + " is bound twice on one path, with extents " + to_string(outer.extent) +
               " and " + to_string(f.extent));
  }

  void loop(const ForNode& f) {
    index_expr(f.min, "min of loop " + quoted(f.var->name));
    index_expr(f.extent, "extent of loop " + quoted(f.var->name));
    if (const int64_t* n = as_const_int(f.extent); n && *n < 0)
      report("loop " + quoted(f.var->name) + " has negative extent " + std::to_string(*n));
    loop_kind(f);
    bool divergent = varies_by_thread(f.min) || varies_by_thread(f.extent);
    if (divergent && contains_barrier(f.body))
      report("loop " + quoted(f.var->name) + " contains a barrier but its bounds depend on the thread");
    define_var(f.var, "loop variable");
    bool bound = f.for_kind == ForKind::kThreadBound;
    if (divergent || (bound && is_thread_idx(f.thread_tag))) thread_varying_.insert(f.var.get());
    if (bound) threads_.push_back({f.thread_tag, f.extent});
    stmt(f.body);
    if (bound) threads_.pop_back();
    undefine_var(f.var);
  }

  // Declared regions must name every buffer the body accesses (extra ones are conservative).
  void check_regions(const BlockNode& b) {
    for (const auto* list : {&b.reads, &b.writes}) {
      for (const BufferRegion& r : *list) {
        use_buffer(r.buffer);
        if (int(r.region.size()) != r.buffer->rank())
          report("region of " + quoted(r.buffer->name) + " in block " + quoted(b.name) + " has " +
                 std::to_string(r.region.size()) + " dimensions, rank " + std::to_string(r.buffer->rank()));
        for (const Range& range : r.region) {
          index_expr(range.min, "region min of " + quoted(r.buffer->name));
          index_expr(range.extent, "region extent of " + quoted(r.buffer->name));
        }
      }
    }
    if (has_rank_mismatch(b.init) || has_rank_mismatch(b.body)) return;  // reported where it occurs
    // Buffers the block allocates, itself or by an Allocate inside, are its own business.
    std::vector<Buffer> own = b.alloc_buffers;
    for (const Stmt* part : {&b.init, &b.body})
      walk(*part, [&](const Stmt& x) {
        if (const AllocateNode* a = x.as<AllocateNode>()) own.push_back(a->buffer);
        return true;
      });
    AccessRegions detected = detect_access_regions(b.init, b.body, own);
    auto declares = [](const std::vector<BufferRegion>& list, const Buffer& buf) {
      return std::any_of(list.begin(), list.end(),
                         [&](const BufferRegion& r) { return r.buffer.same_as(buf); });
    };
    for (const BufferRegion& r : detected.reads)
      if (!declares(b.reads, r.buffer))
        report("block " + quoted(b.name) + " reads " + quoted(r.buffer->name) +
               " without declaring it in reads");
    for (const BufferRegion& r : detected.writes)
      if (!declares(b.writes, r.buffer))
        report("block " + quoted(b.name) + " writes " + quoted(r.buffer->name) +
               " without declaring it in writes");
  }

  // Domains, bindings and the predicate are in the enclosing scope.
  void block_header(const BlockNode& b) {
    if (!block_names_.insert(b.name).second) report("block name " + quoted(b.name) + " is used twice");
    if (b.iter_values.size() != b.iter_vars.size())
      report("block " + quoted(b.name) + " has " + std::to_string(b.iter_vars.size()) +
             " iteration variables but " + std::to_string(b.iter_values.size()) + " bindings");
    for (const IterVar& iv : b.iter_vars) {
      index_expr(iv.dom.min, "domain min of " + quoted(iv.var->name));
      index_expr(iv.dom.extent, "domain extent of " + quoted(iv.var->name));
    }
    binding_context_ = "binding of block " + quoted(b.name);
    for (const Expr& value : b.iter_values) index_expr(value, binding_context_);
    binding_context_ = "predicate of block " + quoted(b.name);
    if (b.predicate.defined()) bool_expr(b.predicate, binding_context_);
    binding_context_.clear();
    if (b.init.defined() && !b.is_reduction())
      report("block " + quoted(b.name) + " has an init but no reduction variable");
  }

  void block(const BlockNode& b) {
    block_header(b);
    std::vector<const VarNode*> varying;
    for (size_t i = 0; i < b.iter_vars.size() && i < b.iter_values.size(); ++i)
      if (varies_by_thread(b.iter_values[i])) varying.push_back(b.iter_vars[i].var.get());
    if (varies_by_thread(b.predicate) && (contains_barrier(b.init) || contains_barrier(b.body)))
      report("block " + quoted(b.name) + " contains a barrier under a thread-dependent predicate");
    frames_.push_back({"block " + quoted(b.name), {}});
    for (const IterVar& iv : b.iter_vars) define_var(iv.var, "iteration variable");
    thread_varying_.insert(varying.begin(), varying.end());
    for (const Buffer& buf : b.alloc_buffers) ++buffers_[buf.get()];
    // The root block's regions stay empty by convention (function.h): its accesses are the function's.
    if (&b != root_) check_regions(b);
    if (b.init.defined()) stmt(b.init);
    stmt(b.body);
    for (const Buffer& buf : b.alloc_buffers) --buffers_[buf.get()];
    for (const IterVar& iv : b.iter_vars) undefine_var(iv.var);
    frames_.pop_back();
  }

  const VerifyOptions& options_;
  const StmtNode* root_ = nullptr;
  std::string binding_context_;  // set while checking a block's bindings or predicate
  std::vector<Frame> frames_;
  std::unordered_set<const VarNode*> on_path_, thread_varying_;
  std::unordered_map<const BufferNode*, int> buffers_;  // how many enclosing definitions
  std::unordered_set<std::string> block_names_;
  std::vector<ThreadBinding> threads_;
  std::vector<std::string> problems_;
  std::unordered_set<std::string> seen_;
};

}  // namespace

std::vector<std::string> verify_problems(const PrimFunc& func, const VerifyOptions& options) {
  if (!func.defined()) return {"undefined function"};
  return Verifier(options).run(*func);
}

void verify(const PrimFunc& func, const VerifyOptions& options) {
  std::vector<std::string> problems = verify_problems(func, options);
  if (problems.empty()) return;
  std::string listing;
  for (const std::string& p : problems) listing += "\n  " + p;
  TESSEL_ICHECK(problems.empty()) << "tensor IR of " << (func.defined() ? func->name : "?")
                                  << " is invalid:" << listing;
}

}  // namespace tessel::tir
