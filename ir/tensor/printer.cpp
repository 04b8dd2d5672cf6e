// Text form of the tensor IR (see printer.h). The conventions, chosen to be unambiguous:
//   - `for i in lo..hi:` is the half-open range [lo, hi) with hi = min + extent (folded when both
//     are constants, else `min + extent`). A non-serial kind follows the range: `parallel`,
//     `vectorized`, `unrolled`, `thread_bound(threadIdx.x)`. Annotations trail as `  # key=value`.
//   - Constants: i64 bare (`3`), other integers with their dtype (`3i32`, `7u8`), bools `true` and
//     `false`; f32 with an `f` (`0.0f`), f64 bare with a point (`1.5`), f16/bf16 with their dtype
//     (`1.5f16`); non-finite floats as casts (`f32(inf)`).
//   - Buffer types: `f32[4, 4]`, then ` strides=[1, 4]` when not row-major, then the scope when not
//     global (` shared`, ` local`). A region dimension of extent 1 prints as its index, else as
//     `min:min + extent`. An iteration domain prints as `[extent]`, or `[lo..hi]` when min is not 0.
//   - An Allocate scopes over the lines that follow it; where more statements of a sequence follow,
//     it prints as `alloc X: f32[4]:` with its body indented instead.
//   - Operators, tightest first: `!`; `*`, `/`, `//` (floordiv), `%` (floormod); `+`, `-`;
//     comparisons; `&&`; `||`. Parentheses only where precedence needs them.
//   - A block prints its header, then `predicate ...` (when not true), `reads`, `writes`, `alloc`
//     lines, `init:` and its body. A PrimFunc's plain root block (function.h) is not shown as a
//     block: its allocations open the function body. An empty sequence prints as `pass`.
//   - Names are unique across the whole text (so a name denotes one variable, even in sibling
//     loops): the first variable (or buffer) met under a name keeps it, a later distinct one gets
//     `_1`, `_2`, ... in printing order, so the text is deterministic.
#include "ir/tensor/printer.h"

#include <charconv>
#include <cmath>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

namespace tessel::tir {

namespace {

// Unique print names for objects with identity (variables, buffers), one namespace each.
class Namer {
 public:
  const std::string& name_of(const void* key, const std::string& hint) {
    auto it = names_.find(key);
    if (it != names_.end()) return it->second;
    std::string base = hint.empty() ? "v" : hint;
    std::string name = base;
    for (int n = 1; used_.count(name); ++n) name = base + "_" + std::to_string(n);
    used_.insert(name);
    return names_.emplace(key, std::move(name)).first->second;
  }

 private:
  std::unordered_map<const void*, std::string> names_;
  std::unordered_set<std::string> used_;
};

enum Precedence : int { kOrPrec = 1, kAndPrec, kCmpPrec, kAddPrec, kMulPrec, kUnaryPrec, kAtomPrec };

const char* infix_operator(ExprKind kind) {
  switch (kind) {
    case ExprKind::kAdd: return "+";
    case ExprKind::kSub: return "-";
    case ExprKind::kMul: return "*";
    case ExprKind::kDiv: return "/";
    case ExprKind::kFloorDiv: return "//";
    case ExprKind::kFloorMod: return "%";
    case ExprKind::kEQ: return "==";
    case ExprKind::kNE: return "!=";
    case ExprKind::kLT: return "<";
    case ExprKind::kLE: return "<=";
    case ExprKind::kGT: return ">";
    case ExprKind::kGE: return ">=";
    case ExprKind::kAnd: return "&&";
    case ExprKind::kOr: return "||";
    default: return nullptr;  // Min and Max print as calls
  }
}

// The binary kinds printed as calls: min(a, b), bitand(a, b), shl(a, b), ...
const char* call_name(ExprKind kind) {
  switch (kind) {
    case ExprKind::kMin: return "min";
    case ExprKind::kMax: return "max";
    case ExprKind::kBitAnd: return "bitand";
    case ExprKind::kBitOr: return "bitor";
    case ExprKind::kBitXor: return "bitxor";
    case ExprKind::kShl: return "shl";
    default: return "shr";
  }
}

int precedence(const Expr& e) {
  switch (e->kind) {
    case ExprKind::kOr: return kOrPrec;
    case ExprKind::kAnd: return kAndPrec;
    case ExprKind::kAdd:
    case ExprKind::kSub: return kAddPrec;
    case ExprKind::kMul:
    case ExprKind::kDiv:
    case ExprKind::kFloorDiv:
    case ExprKind::kFloorMod: return kMulPrec;
    case ExprKind::kNot: return kUnaryPrec;
    case ExprKind::kIntImm: return e.as<IntImmNode>()->value < 0 ? kUnaryPrec : kAtomPrec;
    case ExprKind::kFloatImm: return std::signbit(e.as<FloatImmNode>()->value) ? kUnaryPrec : kAtomPrec;
    default: return is_comparison(e->kind) ? kCmpPrec : kAtomPrec;
  }
}

std::string int_literal(const IntImmNode& n) {
  if (n.dtype == DType::kBool) return n.value ? "true" : "false";
  std::string text = std::to_string(n.value);
  if (n.dtype != kIndexType) text += dtype_name(n.dtype);
  return text;
}

std::string float_literal(const FloatImmNode& n) {
  std::string dtype(dtype_name(n.dtype));
  if (std::isnan(n.value)) return dtype + "(nan)";
  if (std::isinf(n.value)) return dtype + (n.value < 0 ? "(-inf)" : "(inf)");
  char buf[64];
  // Shortest text that reads back as the value in its own precision.
  auto res = n.dtype == DType::kF64 ? std::to_chars(buf, buf + sizeof(buf), n.value)
                                    : std::to_chars(buf, buf + sizeof(buf), float(n.value));
  std::string text(buf, res.ptr);
  if (text.find_first_of(".en") == std::string::npos) text += ".0";
  if (n.dtype == DType::kF32) return text + "f";
  if (n.dtype == DType::kF64) return text;
  return text + dtype;
}

std::string annotations_comment(const Annotations& annotations) {
  if (annotations.empty()) return "";
  std::string text = "  #";
  const char* sep = " ";
  for (const auto& [key, value] : annotations) {
    text += sep + key + "=" + std::to_string(value);
    sep = ", ";
  }
  return text;
}

bool is_true(const Expr& e) {
  const IntImmNode* imm = e.as<IntImmNode>();
  return imm && imm->dtype == DType::kBool && imm->value == 1;
}

class Printer {
 public:
  // ---- Expressions
  void expr(const Expr& e, std::string& out) {
    if (!e.defined()) {
      out += "<undefined>";
      return;
    }
    const ExprNode& n = *e;
    if (is_binary(n.kind)) return binary(e, out);
    switch (n.kind) {
      case ExprKind::kIntImm: out += int_literal(static_cast<const IntImmNode&>(n)); return;
      case ExprKind::kFloatImm: out += float_literal(static_cast<const FloatImmNode&>(n)); return;
      case ExprKind::kVar: out += var_name(static_cast<const VarNode&>(n)); return;
      case ExprKind::kNot:
        out += "!";
        operand(static_cast<const NotNode&>(n).a, kUnaryPrec, false, out);
        return;
      case ExprKind::kSelect: {
        const auto& s = static_cast<const SelectNode&>(n);
        call_form("select", {s.cond, s.true_value, s.false_value}, out);
        return;
      }
      case ExprKind::kCast:
        call_form(dtype_name(n.dtype), {static_cast<const CastNode&>(n).value}, out);
        return;
      case ExprKind::kLoad: {
        const auto& l = static_cast<const LoadNode&>(n);
        access(l.buffer, l.indices, out);
        return;
      }
      case ExprKind::kCall: {
        const auto& c = static_cast<const CallNode&>(n);
        if (c.op == Intrinsic::k_bitcast)
          call_form("bitcast<" + std::string(dtype_name(c.dtype)) + ">", c.args, out);
        else
          call_form(intrinsic_name(c.op), c.args, out);
        return;
      }
      default: out += "<?>"; return;
    }
  }

  std::string expr(const Expr& e) {
    std::string out;
    expr(e, out);
    return out;
  }

  // ---- Statements
  void stmt(const Stmt& s, int indent) {
    if (!s.defined()) return line(indent) << "<undefined>\n", void();
    switch (s->kind) {
      case StmtKind::kFor: return loop(static_cast<const ForNode&>(*s), indent);
      case StmtKind::kStore: {
        const auto& st = static_cast<const StoreNode&>(*s);
        std::string text;
        access(st.buffer, st.indices, text);
        line(indent) << text << " = " << expr(st.value) << "\n";
        return;
      }
      case StmtKind::kAllocate: return allocate(static_cast<const AllocateNode&>(*s), indent, false);
      case StmtKind::kIfThenElse: return if_then_else(static_cast<const IfThenElseNode&>(*s), indent);
      case StmtKind::kSeq: return seq(static_cast<const SeqNode&>(*s), indent);
      case StmtKind::kBarrier: line(indent) << "barrier()\n"; return;
      case StmtKind::kBlock: return block(static_cast<const BlockNode&>(*s), indent);
      case StmtKind::kAssert: {
        const auto& a = static_cast<const AssertNode&>(*s);
        std::string text = "assert(" + expr(a.cond) + ", \"";
        for (char c : a.message) {
          if (c == '"' || c == '\\') text += '\\';
          text += c;
        }
        text += '"';
        for (const Expr& v : a.values) text += ", " + expr(v);
        line(indent) << text << ")\n";
        return;
      }
      case StmtKind::kPrefetch: {
        const auto& p = static_cast<const PrefetchNode&>(*s);
        line(indent) << "prefetch(" << buffer_name(p.buffer) << ", " << expr(p.offset) << ", " << p.lines
                     << (p.lines == 1 ? " line)\n" : " lines)\n");
        return;
      }
    }
  }

  void func(const PrimFuncNode& f) {
    // Parameters first, so that they keep their names.
    os_ << "func " << f.name << "(" << params(f.inputs) << ") -> (" << params(f.outputs) << ") {\n";
    const BlockNode* root = f.body.as<BlockNode>();
    if (root && is_plain_root(*root)) {
      for (const Buffer& b : root->alloc_buffers) line(1) << "alloc " << buffer_decl(b) << "\n";
      stmt(root->body, 1);
    } else {
      stmt(f.body, 1);
    }
    os_ << "}\n";
  }

  std::string str() const { return os_.str(); }

 private:
  std::ostream& line(int indent) { return os_ << std::string(2 * indent, ' '); }

  const std::string& var_name(const VarNode& v) { return var_names_.name_of(&v, v.name); }
  const std::string& buffer_name(const Buffer& b) { return buffer_names_.name_of(b.get(), b->name); }

  // child as an operand of an operator of precedence `prec`; `tight` also parenthesises a child
  // of equal precedence (right operands, and both sides of a comparison).
  void operand(const Expr& child, int prec, bool tight, std::string& out) {
    int child_prec = child.defined() ? precedence(child) : kAtomPrec;
    bool parens = child_prec < prec || (tight && child_prec == prec);
    if (parens) out += "(";
    expr(child, out);
    if (parens) out += ")";
  }

  void binary(const Expr& e, std::string& out) {
    const Expr &a = binary_a(*e), &b = binary_b(*e);
    const char* op = infix_operator(e->kind);
    if (!op) return call_form(call_name(e->kind), {a, b}, out);
    int prec = precedence(e);
    operand(a, prec, is_comparison(e->kind), out);
    out += std::string(" ") + op + " ";
    operand(b, prec, true, out);
  }

  void call_form(std::string_view name, const std::vector<Expr>& args, std::string& out) {
    out += name;
    out += "(";
    comma_list(args, out);
    out += ")";
  }

  void access(const Buffer& buffer, const std::vector<Expr>& indices, std::string& out) {
    out += buffer_name(buffer);
    out += "[";
    comma_list(indices, out);
    out += "]";
  }

  void comma_list(const std::vector<Expr>& exprs, std::string& out) {
    for (size_t i = 0; i < exprs.size(); ++i) {
      if (i) out += ", ";
      expr(exprs[i], out);
    }
  }

  // lo + extent, folded when both are constants.
  std::string upper_bound(const Expr& min, const Expr& extent) {
    const int64_t *lo = as_const_int(min), *n = as_const_int(extent);
    if (lo && n) return std::to_string(*lo + *n);
    if (lo && *lo == 0) return expr(extent);
    std::string out;
    operand(min, kAddPrec, false, out);
    out += " + ";
    operand(extent, kAddPrec, true, out);
    return out;
  }

  std::string buffer_type(const Buffer& b) {
    std::string text(dtype_name(b->dtype));
    text += "[" + join_ints(b->shape) + "]";
    if (!b->is_row_major()) text += " strides=[" + join_ints(b->strides) + "]";
    if (b->scope != MemScope::kGlobal) text += " " + std::string(mem_scope_name(b->scope));
    return text;
  }
  std::string buffer_decl(const Buffer& b) { return buffer_name(b) + ": " + buffer_type(b); }
  static std::string join_ints(const std::vector<int64_t>& values) {
    std::string text;
    for (size_t i = 0; i < values.size(); ++i) text += (i ? ", " : "") + std::to_string(values[i]);
    return text;
  }
  std::string params(const std::vector<Buffer>& buffers) {
    std::string text;
    for (size_t i = 0; i < buffers.size(); ++i) text += (i ? ", " : "") + buffer_decl(buffers[i]);
    return text;
  }

  std::string region(const BufferRegion& r) {
    std::string text = buffer_name(r.buffer) + "[";
    for (size_t d = 0; d < r.region.size(); ++d) {
      const Range& range = r.region[d];
      if (d) text += ", ";
      text += expr(range.min);
      if (!is_const_int(range.extent, 1)) text += ":" + upper_bound(range.min, range.extent);
    }
    return text + "]";
  }
  std::string regions(const std::vector<BufferRegion>& list) {
    std::string text;
    for (size_t i = 0; i < list.size(); ++i) text += (i ? ", " : "") + region(list[i]);
    return text;
  }

  void loop(const ForNode& f, int indent) {
    std::string head = "for " + var_name(*f.var) + " in " + expr(f.min) + ".." + upper_bound(f.min, f.extent);
    if (f.for_kind == ForKind::kThreadBound) {
      head += " thread_bound(" + f.thread_tag + ")";
    } else if (f.for_kind != ForKind::kSerial) {
      head += " " + std::string(for_kind_name(f.for_kind));
    }
    line(indent) << head << ":" << annotations_comment(f.annotations) << "\n";
    stmt(f.body, indent + 1);
  }

  void allocate(const AllocateNode& a, int indent, bool nested) {
    line(indent) << "alloc " << buffer_decl(a.buffer) << (nested ? ":" : "") << "\n";
    stmt(a.body, nested ? indent + 1 : indent);
  }

  void if_then_else(const IfThenElseNode& n, int indent) {
    line(indent) << "if " << expr(n.cond) << ":\n";
    stmt(n.then_case, indent + 1);
    if (!n.else_case.defined()) return;
    line(indent) << "else:\n";
    stmt(n.else_case, indent + 1);
  }

  void seq(const SeqNode& s, int indent) {
    if (s.stmts.empty()) line(indent) << "pass\n";
    for (size_t i = 0; i < s.stmts.size(); ++i) {
      const AllocateNode* a = s.stmts[i].as<AllocateNode>();
      if (a && i + 1 < s.stmts.size()) {
        allocate(*a, indent, true);
      } else {
        stmt(s.stmts[i], indent);
      }
    }
  }

  std::string iter_var(const BlockNode& b, size_t i) {
    const IterVar& iv = b.iter_vars[i];
    std::string text = var_name(*iv.var) + ": " + std::string(iter_kind_name(iv.kind)) + "[";
    if (!is_const_int(iv.dom.min, 0)) text += expr(iv.dom.min) + "..";
    text += upper_bound(iv.dom.min, iv.dom.extent) + "]";
    if (i < b.iter_values.size()) text += " = " + expr(b.iter_values[i]);
    return text;
  }

  void block(const BlockNode& b, int indent) {
    std::string head = "block " + b.name;
    if (!b.iter_vars.empty()) {
      head += "(";
      for (size_t i = 0; i < b.iter_vars.size(); ++i) head += (i ? ", " : "") + iter_var(b, i);
      head += ")";
    }
    line(indent) << head << ":" << annotations_comment(b.annotations) << "\n";
    if (b.predicate.defined() && !is_true(b.predicate))
      line(indent + 1) << "predicate " << expr(b.predicate) << "\n";
    if (!b.reads.empty()) line(indent + 1) << "reads " << regions(b.reads) << "\n";
    if (!b.writes.empty()) line(indent + 1) << "writes " << regions(b.writes) << "\n";
    for (const Buffer& buf : b.alloc_buffers) line(indent + 1) << "alloc " << buffer_decl(buf) << "\n";
    if (b.init.defined()) {
      line(indent + 1) << "init:\n";
      stmt(b.init, indent + 2);
    }
    stmt(b.body, indent + 1);
  }

  // The root block convention of function.h: shown as the function's own body.
  static bool is_plain_root(const BlockNode& b) {
    return b.name == "root" && b.iter_vars.empty() && b.iter_values.empty() && is_true(b.predicate) &&
           b.reads.empty() && b.writes.empty() && !b.init.defined() && b.annotations.empty();
  }

  std::ostringstream os_;
  Namer var_names_, buffer_names_;
};

}  // namespace

std::string to_string(const Expr& e) {
  return Printer().expr(e);
}

std::string to_string(const Stmt& s) {
  Printer p;
  p.stmt(s, 0);
  return p.str();
}

std::string to_string(const PrimFunc& f) {
  if (!f.defined()) return "<undefined>\n";
  Printer p;
  p.func(*f);
  return p.str();
}

std::ostream& operator<<(std::ostream& os, const Expr& e) {
  return os << to_string(e);
}
std::ostream& operator<<(std::ostream& os, const Stmt& s) {
  return os << to_string(s);
}
std::ostream& operator<<(std::ostream& os, const PrimFunc& f) {
  return os << to_string(f);
}

}  // namespace tessel::tir
