// Tensor IR expressions as CUDA C, fully parenthesised. Integers compute in
// their own C types and narrow back explicitly (wrap-around); divisions,
// float min/max and float-to-int go through the prelude's helpers; 16-bit
// floats compute in float and round where the IR casts to them.
#include <cctype>
#include <climits>
#include <cmath>
#include <cstdio>

#include "ir/core/diagnostics.h"
#include "ir/tensor/simplify.h"
#include "src/codegen/cuda/cuda_printer.h"

namespace tessel::codegen::cuda_detail {

using namespace tir;

namespace {

std::string sanitize(const std::string& name) {
  std::string out;
  for (char c : name) out += (std::isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
  if (out.empty() || std::isdigit(static_cast<unsigned char>(out[0]))) out = "v_" + out;
  return out;
}

std::string float_literal(double v, DType t) {
  bool f64 = t == DType::kF64;
  if (std::isnan(v))
    return f64 ? "tessel_f64_from_bits(0x7ff8000000000000ULL)" : "tessel_f32_from_bits(0x7fc00000u)";
  if (std::isinf(v)) {
    if (f64)
      return v > 0 ? "tessel_f64_from_bits(0x7ff0000000000000ULL)"
                   : "tessel_f64_from_bits(0xfff0000000000000ULL)";
    return v > 0 ? "tessel_f32_from_bits(0x7f800000u)" : "tessel_f32_from_bits(0xff800000u)";
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, f64 ? "%.17g" : "%.9g", f64 ? v : double(float(v)));
  std::string s = buf;
  if (s.find_first_of(".en") == std::string::npos) s += ".0";
  return f64 ? s : s + "f";
}

// Integers narrower than the helpers' int64 (u32 included: a helper's result is narrowed back).
bool is_narrow_int(DType t) {
  return is_integer(t) && t != DType::kI64 && t != DType::kU64;
}

// The C name of a float function: expf for float, exp for double.
std::string math_name(const char* base, DType t) {
  return t == DType::kF64 ? std::string(base) : std::string(base) + "f";
}

}  // namespace

std::string CNames::fresh(const std::string& base) {
  std::string name = sanitize(base);
  for (int i = 1; used_.count(name); ++i) name = sanitize(base) + "_" + std::to_string(i);
  used_.insert(name);
  return name;
}

void reserve_c_words(CNames& names) {
  static const char* const kWords[] = {
      "alignas",   "alignof",   "and",      "asm",     "auto",      "bool",     "break",   "case",
      "catch",     "char",      "class",    "const",   "constexpr", "continue", "default", "delete",
      "do",        "double",    "else",     "enum",    "explicit",  "export",   "extern",  "false",
      "float",     "for",       "friend",   "goto",    "if",        "inline",   "int",     "long",
      "mutable",   "namespace", "new",      "not",     "operator",  "or",       "private", "protected",
      "public",    "register",  "return",   "short",   "signed",    "sizeof",   "static",  "struct",
      "switch",    "template",  "this",     "throw",   "true",      "try",      "typedef", "typename",
      "union",     "unsigned",  "using",    "virtual", "void",      "volatile", "while",   "xor",
      "threadIdx", "blockIdx",  "blockDim", "gridDim", "warpSize",  "std",      "args",    "self",
      "closure",   "isinf",     "isnan",    "exp",     "log",       "sqrt",     "tanh",    "erf",
      "pow",       "fabs",      "floor",    "ceil",    "rint",      "sin",      "cos",     "tan",
      "asin",      "acos",      "atan",     "sinh",    "cosh",      "asinh",    "acosh",   "atanh",
      "fmod",      "expf",      "logf",     "sqrtf",   "tanhf",     "erff",     "powf",    "fabsf",
      "floorf",    "ceilf",     "rintf",    "sinf",    "cosf",      "tanf",     "asinf",   "acosf",
      "atanf",     "sinhf",     "coshf",    "asinhf",  "acoshf",    "atanhf",   "fmodf",   "malloc",
      "free",      "memcpy"};
  for (const char* w : kWords) names.fresh(w);
}

// The IR's own names never take the prelude's prefix.
std::string ir_name(const std::string& name) {
  return name.rfind("tessel_", 0) == 0 ? "v_" + name : name;
}

std::string CNames::var(const VarNode* v) {
  auto it = names_.find(v);
  if (it != names_.end()) return it->second;
  return names_[v] = fresh(ir_name(v->name));
}

std::string CNames::buffer(const BufferNode* b) {
  auto it = names_.find(b);
  if (it != names_.end()) return it->second;
  return names_[b] = fresh(ir_name(b->name));
}

std::string c_type(DType t) {
  switch (t) {
    case DType::kF32:
    case DType::kF16:
    case DType::kBF16: return "float";
    case DType::kF64: return "double";
    case DType::kI8: return "tessel_i8";
    case DType::kU8: return "tessel_u8";
    case DType::kI32: return "tessel_i32";
    case DType::kI64: return "tessel_i64";
    case DType::kBool: return "bool";
    case DType::kI16: return "tessel_i16";
    case DType::kU16: return "tessel_u16";
    case DType::kU32: return "tessel_u32";
    case DType::kU64: return "tessel_u64";
    default:
      TESSEL_USER_ERROR(Span{})
          << "the CUDA target does not support " << dtype_name(t)
          << " tensors yet (the 8-bit floats and the 4- and 2-bit types run on the CPU)";
  }
  TESSEL_ICHECK(false) << "unknown dtype";
  return {};
}

std::string c_storage_type(DType t) {
  switch (t) {
    case DType::kF16:
    case DType::kBF16: return "tessel_u16";
    case DType::kBool: return "tessel_u8";
    default: return c_type(t);
  }
}

int64_t c_storage_bytes(DType t) {
  return t == DType::kF16 || t == DType::kBF16 ? 2 : int64_t(dtype_size(t));
}

std::string c_string_literal(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (static_cast<unsigned char>(c) < 0x20) {
      out += ' ';
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string CudaPrinter::expr(const Expr& e) {
  switch (e->kind) {
    case ExprKind::kIntImm: {
      int64_t v = static_cast<const IntImmNode&>(*e).value;
      if (e->dtype == DType::kBool) return v ? "true" : "false";
      if (e->dtype == DType::kI64)
        return v == INT64_MIN ? "((tessel_i64)0x8000000000000000ULL)" : std::to_string(v) + "LL";
      return "((" + c_type(e->dtype) + ")" + std::to_string(v) + ")";
    }
    case ExprKind::kFloatImm: return float_literal(static_cast<const FloatImmNode&>(*e).value, e->dtype);
    case ExprKind::kVar: return names_.var(static_cast<const VarNode*>(e.get()));
    case ExprKind::kNot: return "(!" + expr(static_cast<const NotNode&>(*e).a) + ")";
    case ExprKind::kSelect: {
      const auto& s = static_cast<const SelectNode&>(*e);
      return "(" + expr(s.cond) + " ? " + expr(s.true_value) + " : " + expr(s.false_value) + ")";
    }
    case ExprKind::kCast: {
      const auto& c = static_cast<const CastNode&>(*e);
      return cast(e->dtype, c.value->dtype, expr(c.value));
    }
    case ExprKind::kLoad: return load(static_cast<const LoadNode&>(*e));
    case ExprKind::kCall: return call(static_cast<const CallNode&>(*e));
    default: return binary(*e);
  }
}

std::string CudaPrinter::binary(const ExprNode& e) {
  static const char* const kOps[] = {"==", "!=", "<", "<=", ">", ">="};
  DType t = binary_a(e)->dtype;
  std::string a = expr(binary_a(e)), b = expr(binary_b(e));
  if (is_comparison(e.kind)) return "(" + a + " " + kOps[int(e.kind) - int(ExprKind::kEQ)] + " " + b + ")";
  if (e.kind == ExprKind::kAnd) return "(" + a + " && " + b + ")";
  if (e.kind == ExprKind::kOr) return "(" + a + " || " + b + ")";
  return is_float(t) ? float_binary(e, a, b) : int_binary(e, a, b);
}

bool CudaPrinter::is_plain_division(const ExprNode& e) const {
  const int64_t* divisor = as_const_int(binary_b(e));
  if (!divisor || *divisor <= 0) return false;
  std::optional<int64_t> min = ranges_.bound(binary_a(e)).min;
  return min && *min >= 0;
}

std::string CudaPrinter::int_binary(const ExprNode& e, const std::string& a, const std::string& b) {
  std::string r;
  bool plain = (e.kind == ExprKind::kFloorDiv || e.kind == ExprKind::kFloorMod) && is_plain_division(e);
  if (plain) {
    r = "(" + a + (e.kind == ExprKind::kFloorDiv ? " / " : " % ") + b + ")";
    return is_narrow_int(e.dtype) ? "((" + c_type(e.dtype) + ")" + r + ")" : r;
  }
  if (e.dtype == DType::kU64) return u64_binary(e, a, b);
  switch (e.kind) {
    case ExprKind::kAdd: r = "(" + a + " + " + b + ")"; break;
    case ExprKind::kSub: r = "(" + a + " - " + b + ")"; break;
    case ExprKind::kMul: r = "(" + a + " * " + b + ")"; break;
    case ExprKind::kDiv: r = "tessel_div(" + a + ", " + b + ")"; break;
    case ExprKind::kFloorDiv: r = "tessel_floordiv(" + a + ", " + b + ")"; break;
    case ExprKind::kFloorMod: r = "tessel_floormod(" + a + ", " + b + ")"; break;
    case ExprKind::kMin: r = "tessel_imin(" + a + ", " + b + ")"; break;
    case ExprKind::kMax: r = "tessel_imax(" + a + ", " + b + ")"; break;
    case ExprKind::kBitAnd: r = "(" + a + " & " + b + ")"; break;
    case ExprKind::kBitOr: r = "(" + a + " | " + b + ")"; break;
    case ExprKind::kBitXor: r = "(" + a + " ^ " + b + ")"; break;
    case ExprKind::kShl: r = "tessel_shl(" + a + ", " + b + ")"; break;
    case ExprKind::kShr:
      r = std::string(is_signed(e.dtype) ? "tessel_shr(" : "tessel_ushr(") + a + ", " + b + ")";
      break;
    default: TESSEL_ICHECK(false) << "no CUDA C for integer " << expr_kind_name(e.kind);
  }
  // C computes narrow integers in int (or the helpers in int64): narrow back, wrapping.
  bool helper = e.kind != ExprKind::kAdd && e.kind != ExprKind::kSub && e.kind != ExprKind::kMul;
  if (is_narrow_int(e.dtype) || (helper && e.dtype != DType::kI64))
    return "((" + c_type(e.dtype) + ")" + r + ")";
  return r;
}

// u64 arithmetic in unsigned long long: +, -, * wrap in C already.
std::string CudaPrinter::u64_binary(const ExprNode& e, const std::string& a, const std::string& b) {
  switch (e.kind) {
    case ExprKind::kAdd: return "(" + a + " + " + b + ")";
    case ExprKind::kSub: return "(" + a + " - " + b + ")";
    case ExprKind::kMul: return "(" + a + " * " + b + ")";
    case ExprKind::kDiv:
    case ExprKind::kFloorDiv: return "tessel_udiv(" + a + ", " + b + ")";
    case ExprKind::kFloorMod: return "tessel_umod(" + a + ", " + b + ")";
    case ExprKind::kMin: return "tessel_umin(" + a + ", " + b + ")";
    case ExprKind::kMax: return "tessel_umax(" + a + ", " + b + ")";
    case ExprKind::kBitAnd: return "(" + a + " & " + b + ")";
    case ExprKind::kBitOr: return "(" + a + " | " + b + ")";
    case ExprKind::kBitXor: return "(" + a + " ^ " + b + ")";
    case ExprKind::kShl: return "tessel_ushl(" + a + ", " + b + ")";
    case ExprKind::kShr: return "tessel_ushr(" + a + ", " + b + ")";
    default: TESSEL_ICHECK(false) << "no CUDA C for integer " << expr_kind_name(e.kind);
  }
  return {};
}

std::string CudaPrinter::float_binary(const ExprNode& e, const std::string& a, const std::string& b) {
  DType t = e.dtype;
  bool f64 = t == DType::kF64;
  switch (e.kind) {
    case ExprKind::kAdd: return "(" + a + " + " + b + ")";
    case ExprKind::kSub: return "(" + a + " - " + b + ")";
    case ExprKind::kMul: return "(" + a + " * " + b + ")";
    case ExprKind::kDiv: return "(" + a + " / " + b + ")";
    case ExprKind::kMin: return std::string(f64 ? "tessel_fmin(" : "tessel_fminf(") + a + ", " + b + ")";
    case ExprKind::kMax: return std::string(f64 ? "tessel_fmax(" : "tessel_fmaxf(") + a + ", " + b + ")";
    case ExprKind::kFloorDiv: return math_name("floor", t) + "(" + a + " / " + b + ")";
    case ExprKind::kFloorMod:
      return "(" + a + " - " + math_name("floor", t) + "(" + a + " / " + b + ") * " + b + ")";
    default: TESSEL_ICHECK(false) << "no CUDA C for float " << expr_kind_name(e.kind);
  }
  return {};
}

std::string CudaPrinter::cast(DType to, DType from, const std::string& v) {
  if (to == from) return v;
  if (to == DType::kBool) return "(" + v + " != 0)";
  if (is_float(to)) {
    std::string r = "((" + c_type(to) + ")" + v + ")";
    if (to == DType::kF16) return "tessel_round_h(" + r + ")";
    if (to == DType::kBF16) return "tessel_round_bf(" + r + ")";
    return r;
  }
  if (is_float(from)) return "((" + c_type(to) + ")tessel_f2i((double)" + v + "))";
  return "((" + c_type(to) + ")" + v + ")";
}

std::string CudaPrinter::call(const CallNode& e) {
  DType t = e.args[0]->dtype;
  std::string x = expr(e.args[0]);
  if (e.op == Intrinsic::k_bitcast)
    return "tessel_bitcast<" + c_type(e.dtype) + ", " + c_type(t) + ">(" + x + ")";
  switch (e.op) {
    case Intrinsic::k_isnan: return "(" + x + " != " + x + ")";
    case Intrinsic::k_isinf:
      return "(" + math_name("fabs", t) + "(" + x + ") == " + float_literal(INFINITY, t) + ")";
    case Intrinsic::k_rsqrt:
      return "(" + float_literal(1.0, t) + " / " + math_name("sqrt", t) + "(" + x + "))";
    case Intrinsic::k_sigmoid:
      return std::string(t == DType::kF64 ? "tessel_sigmoid(" : "tessel_sigmoidf(") + x + ")";
    case Intrinsic::k_round: return math_name("rint", t) + "(" + x + ")";
    default: break;
  }
  std::string name = math_name(std::string(intrinsic_name(e.op)).c_str(), t);
  if (intrinsic_arity(e.op) == 2) return name + "(" + x + ", " + expr(e.args[1]) + ")";
  return name + "(" + x + ")";
}

Expr CudaPrinter::linear_offset(const BufferNode& buffer, const std::vector<Expr>& indices) {
  Expr off = int_imm(0);
  for (size_t d = 0; d < indices.size(); ++d) {
    Expr i = indices[d]->dtype == kIndexType ? indices[d] : tir::cast(kIndexType, indices[d]);
    off = off + i * buffer.strides[d];
  }
  return off;
}

std::string CudaPrinter::offset(const BufferNode& buffer, const std::vector<Expr>& indices) {
  return expr(ranges_.simplify(linear_offset(buffer, indices)));
}

std::string CudaPrinter::load(const LoadNode& e) {
  std::string at = names_.buffer(e.buffer.get()) + "[" + offset(*e.buffer, e.indices) + "]";
  switch (e.buffer->dtype) {
    case DType::kF16: return "tessel_h2f(" + at + ")";
    case DType::kBF16: return "tessel_bf2f(" + at + ")";
    case DType::kBool: return "(" + at + " != 0)";
    default: return at;
  }
}

}  // namespace tessel::codegen::cuda_detail
