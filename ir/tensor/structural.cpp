// Structural equality and hashing (see structural.h). Both reduce a tree to one canonical
// stream of 64-bit words in which each variable and buffer appears as the number of its
// definition (or of its first use, when it is free); equality compares two streams and the hash
// hashes one, so the two agree by construction.
#include "ir/tensor/structural.h"

#include <bit>
#include <unordered_map>

namespace tessel::tir {

namespace {

// Tags keep the stream decodable: every node starts with one, lists carry their length.
enum Tag : uint64_t {
  kUndefined = 1,
  kVarDef,
  kVarUse,
  kFreeVar,
  kBufferDef,
  kBufferUse,
  kFreeBuffer,
  kExprBase = 0x100,
  kStmtBase = 0x200,
  kFunc = 0x300,
};

class Canonicalizer {
 public:
  std::vector<uint64_t> words;

  void expr(const Expr& e) {
    if (!e.defined()) return put(kUndefined);
    const ExprNode& n = *e;
    put(kExprBase + uint64_t(n.kind));
    put(uint64_t(n.dtype));
    if (is_binary(n.kind)) {
      expr(binary_a(n));
      expr(binary_b(n));
      return;
    }
    switch (n.kind) {
      case ExprKind::kIntImm: return put(uint64_t(static_cast<const IntImmNode&>(n).value));
      case ExprKind::kFloatImm:
        return put(std::bit_cast<uint64_t>(static_cast<const FloatImmNode&>(n).value));
      case ExprKind::kVar: return use_var(static_cast<const VarNode*>(e.get()));
      case ExprKind::kNot: return expr(static_cast<const NotNode&>(n).a);
      case ExprKind::kSelect: {
        const auto& s = static_cast<const SelectNode&>(n);
        expr(s.cond);
        expr(s.true_value);
        return expr(s.false_value);
      }
      case ExprKind::kCast: return expr(static_cast<const CastNode&>(n).value);
      case ExprKind::kLoad: {
        const auto& l = static_cast<const LoadNode&>(n);
        use_buffer(l.buffer);
        return exprs(l.indices);
      }
      case ExprKind::kCall: {
        const auto& c = static_cast<const CallNode&>(n);
        put(uint64_t(c.op));
        return exprs(c.args);
      }
      default: return;
    }
  }

  void stmt(const Stmt& s) {
    if (!s.defined()) return put(kUndefined);
    put(kStmtBase + uint64_t(s->kind));
    switch (s->kind) {
      case StmtKind::kFor: return loop(static_cast<const ForNode&>(*s));
      case StmtKind::kStore: {
        const auto& st = static_cast<const StoreNode&>(*s);
        use_buffer(st.buffer);
        expr(st.value);
        return exprs(st.indices);
      }
      case StmtKind::kAllocate: {
        const auto& a = static_cast<const AllocateNode&>(*s);
        BufferScope scope(*this, {a.buffer});
        return stmt(a.body);
      }
      case StmtKind::kIfThenElse: {
        const auto& n = static_cast<const IfThenElseNode&>(*s);
        expr(n.cond);
        stmt(n.then_case);
        return stmt(n.else_case);
      }
      case StmtKind::kSeq: {
        const auto& seq = static_cast<const SeqNode&>(*s);
        put(seq.stmts.size());
        for (const Stmt& c : seq.stmts) stmt(c);
        return;
      }
      case StmtKind::kBarrier: return;
      case StmtKind::kBlock: return block(static_cast<const BlockNode&>(*s));
      case StmtKind::kAssert: {
        const auto& n = static_cast<const AssertNode&>(*s);
        expr(n.cond);
        put_string(n.message);
        return exprs(n.values);
      }
      case StmtKind::kPrefetch: {
        const auto& n = static_cast<const PrefetchNode&>(*s);
        use_buffer(n.buffer);
        put(uint64_t(n.lines));
        return expr(n.offset);
      }
    }
  }

  void func(const PrimFuncNode& f) {
    put(kFunc);
    put(f.inputs.size());
    put(f.outputs.size());
    BufferScope scope(*this, f.params());
    stmt(f.body);
  }

 private:
  // Definitions shadow for their subtree and are undone after it, so that sibling loops that
  // reuse one Var compare like loops with distinct Vars.
  class VarScope {
   public:
    VarScope(Canonicalizer& c, const std::vector<Var>& vars) : c_(c) {
      for (const Var& v : vars) saved_.emplace_back(v.get(), c_.define_var(*v));
    }
    ~VarScope() {
      for (auto it = saved_.rbegin(); it != saved_.rend(); ++it)
        c_.restore(c_.var_ids_, it->first, it->second);
    }

   private:
    Canonicalizer& c_;
    std::vector<std::pair<const VarNode*, int64_t>> saved_;
  };
  class BufferScope {
   public:
    BufferScope(Canonicalizer& c, const std::vector<Buffer>& buffers) : c_(c) {
      for (const Buffer& b : buffers) saved_.emplace_back(b.get(), c_.define_buffer(b));
    }
    ~BufferScope() {
      for (auto it = saved_.rbegin(); it != saved_.rend(); ++it)
        c_.restore(c_.buffer_ids_, it->first, it->second);
    }

   private:
    Canonicalizer& c_;
    std::vector<std::pair<const BufferNode*, int64_t>> saved_;
  };

  void put(uint64_t w) { words.push_back(w); }

  void put_string(const std::string& s) {
    put(s.size());
    for (size_t i = 0; i < s.size(); i += 8) {
      uint64_t w = 0;
      for (size_t j = i; j < s.size() && j < i + 8; ++j) w = (w << 8) | uint8_t(s[j]);
      put(w);
    }
  }

  void exprs(const std::vector<Expr>& list) {
    put(list.size());
    for (const Expr& e : list) expr(e);
  }

  void annotations(const Annotations& a) {
    put(a.size());
    for (const auto& [key, value] : a) {
      put_string(key);
      put(uint64_t(value));
    }
  }

  // Returns the previous number of v (-1: none), for VarScope to restore.
  int64_t define_var(const VarNode& v) {
    put(kVarDef);
    put(uint64_t(v.dtype));
    auto [it, inserted] = var_ids_.try_emplace(&v, next_var_);
    int64_t previous = inserted ? -1 : it->second;
    it->second = next_var_++;
    return previous;
  }

  void use_var(const VarNode* v) {
    auto it = var_ids_.find(v);
    if (it != var_ids_.end()) {
      put(kVarUse);
      return put(it->second);
    }
    put(kFreeVar);  // the node's dtype is already in the stream
    var_ids_.emplace(v, next_var_);
    put(next_var_++);
  }

  void buffer_descriptor(const BufferNode& b) {
    put(uint64_t(b.dtype));
    put(uint64_t(b.scope));
    put(b.shape.size());
    for (int64_t d : b.shape) put(uint64_t(d));
    put(b.strides.size());
    for (int64_t d : b.strides) put(uint64_t(d));
  }

  int64_t define_buffer(const Buffer& b) {
    put(kBufferDef);
    buffer_descriptor(*b);
    auto [it, inserted] = buffer_ids_.try_emplace(b.get(), next_buffer_);
    int64_t previous = inserted ? -1 : it->second;
    it->second = next_buffer_++;
    return previous;
  }

  void use_buffer(const Buffer& b) {
    auto it = buffer_ids_.find(b.get());
    if (it != buffer_ids_.end()) {
      put(kBufferUse);
      return put(it->second);
    }
    put(kFreeBuffer);
    buffer_descriptor(*b);
    buffer_ids_.emplace(b.get(), next_buffer_);
    put(next_buffer_++);
  }

  template <typename Map, typename Key>
  static void restore(Map& map, Key key, int64_t previous) {
    if (previous < 0) {
      map.erase(key);
    } else {
      map[key] = previous;
    }
  }

  void loop(const ForNode& f) {
    expr(f.min);
    expr(f.extent);
    put(uint64_t(f.for_kind));
    put_string(f.thread_tag);
    annotations(f.annotations);
    VarScope scope(*this, {f.var});
    stmt(f.body);
  }

  void region(const BufferRegion& r) {
    use_buffer(r.buffer);
    put(r.region.size());
    for (const Range& range : r.region) {
      expr(range.min);
      expr(range.extent);
    }
  }

  // Domains, bindings and the predicate are in the enclosing scope; the rest in the block's.
  void block(const BlockNode& b) {
    put_string(b.name);
    put(b.iter_vars.size());
    std::vector<Var> vars;
    for (const IterVar& iv : b.iter_vars) {
      expr(iv.dom.min);
      expr(iv.dom.extent);
      put(uint64_t(iv.kind));
      vars.push_back(iv.var);
    }
    exprs(b.iter_values);
    expr(b.predicate);
    annotations(b.annotations);
    VarScope var_scope(*this, vars);
    put(b.alloc_buffers.size());
    BufferScope buffer_scope(*this, b.alloc_buffers);
    for (const auto* list : {&b.reads, &b.writes}) {
      put(list->size());
      for (const BufferRegion& r : *list) region(r);
    }
    stmt(b.init);
    stmt(b.body);
  }

  std::unordered_map<const VarNode*, int64_t> var_ids_;
  std::unordered_map<const BufferNode*, int64_t> buffer_ids_;
  int64_t next_var_ = 0, next_buffer_ = 0;
};

uint64_t mix(uint64_t x) {  // splitmix64's finaliser
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

uint64_t hash_words(const std::vector<uint64_t>& words) {
  uint64_t h = mix(words.size());
  for (uint64_t w : words) h = mix(h + 0x9e3779b97f4a7c15ULL + w);
  return h;
}

template <typename T>
std::vector<uint64_t> canonical(const T& node) {
  Canonicalizer c;
  if constexpr (std::is_same_v<T, PrimFunc>) {
    if (node.defined()) c.func(*node);
  } else if constexpr (std::is_same_v<T, Expr>) {
    c.expr(node);
  } else {
    c.stmt(node);
  }
  return std::move(c.words);
}

template <typename T>
bool equal(const T& a, const T& b) {
  if (a.same_as(b)) return true;
  if (a.defined() != b.defined()) return false;
  return canonical(a) == canonical(b);
}

}  // namespace

bool structural_equal(const Expr& a, const Expr& b) {
  return equal(a, b);
}
bool structural_equal(const Stmt& a, const Stmt& b) {
  return equal(a, b);
}
bool structural_equal(const PrimFunc& a, const PrimFunc& b) {
  return equal(a, b);
}

uint64_t structural_hash(const Expr& e) {
  return hash_words(canonical(e));
}
uint64_t structural_hash(const Stmt& s) {
  return hash_words(canonical(s));
}
uint64_t structural_hash(const PrimFunc& f) {
  return hash_words(canonical(f));
}

}  // namespace tessel::tir
