// Builders and names of tensor IR expressions.
#include "ir/tensor/expr.h"

#include "ir/core/diagnostics.h"

namespace tessel::tir {

std::string_view expr_kind_name(ExprKind kind) {
  switch (kind) {
    case ExprKind::kIntImm: return "IntImm";
    case ExprKind::kFloatImm: return "FloatImm";
    case ExprKind::kVar: return "Var";
#define TESSEL_X(name) \
  case ExprKind::k##name: return #name;
      TESSEL_TIR_BINARY_EXPRS(TESSEL_X)
#undef TESSEL_X
    case ExprKind::kNot: return "Not";
    case ExprKind::kSelect: return "Select";
    case ExprKind::kCast: return "Cast";
    case ExprKind::kLoad: return "Load";
    case ExprKind::kCall: return "Call";
  }
  return "?";
}

bool is_binary(ExprKind kind) {
  return kind >= ExprKind::kAdd && kind <= ExprKind::kOr;
}
bool is_bitwise(ExprKind kind) {
  return kind >= ExprKind::kBitAnd && kind <= ExprKind::kShr;
}
bool is_comparison(ExprKind kind) {
  return kind >= ExprKind::kEQ && kind <= ExprKind::kGE;
}

// All binary nodes have the same layout, so any instantiation reads the operands.
const Expr& binary_a(const ExprNode& node) {
  TESSEL_ICHECK(is_binary(node.kind)) << expr_kind_name(node.kind);
  return static_cast<const AddNode&>(node).a;
}
const Expr& binary_b(const ExprNode& node) {
  TESSEL_ICHECK(is_binary(node.kind)) << expr_kind_name(node.kind);
  return static_cast<const AddNode&>(node).b;
}

std::string_view intrinsic_name(Intrinsic op) {
  switch (op) {
#define TESSEL_X(name) \
  case Intrinsic::k_##name: return #name;
    TESSEL_TIR_INTRINSICS(TESSEL_X)
#undef TESSEL_X
  }
  return "?";
}

int intrinsic_arity(Intrinsic op) {
  return op == Intrinsic::k_pow || op == Intrinsic::k_fmod ? 2 : 1;
}

Var var(std::string name, DType dtype) {
  return make_ref<VarNode>(std::move(name), dtype);
}
Expr int_imm(int64_t value, DType dtype) {
  TESSEL_ICHECK(is_integer(dtype) || dtype == DType::kBool || is_small(dtype))
      << dtype_name(dtype);  // small: a code
  return make_ref<IntImmNode>(dtype, value);
}
Expr float_imm(double value, DType dtype) {
  TESSEL_ICHECK(is_float(dtype)) << dtype_name(dtype);
  return make_ref<FloatImmNode>(dtype, value);
}
Expr const_of(DType dtype, double value) {
  if (is_float(dtype)) return float_imm(value, dtype);
  if (dtype == DType::kBool) return bool_imm(value != 0);
  return int_imm(int64_t(value), dtype);
}
Expr bool_imm(bool value) {
  return make_ref<IntImmNode>(DType::kBool, value ? 1 : 0);
}

namespace {

// A constant of dtype t, exact for every int64 when t is an integer type.
Expr imm_like(DType t, int64_t v) {
  return is_float(t) ? float_imm(double(v), t) : int_imm(v, t);
}

template <ExprKind K>
Expr make_binary(DType result, Expr a, Expr b) {
  return make_ref<BinaryNode<K>>(result, std::move(a), std::move(b));
}

}  // namespace

Expr binary(ExprKind kind, Expr a, Expr b) {
  TESSEL_ICHECK(a.defined() && b.defined()) << expr_kind_name(kind) << " of an undefined operand";
  TESSEL_ICHECK(a->dtype == b->dtype)
      << expr_kind_name(kind) << " of " << dtype_name(a->dtype) << " and " << dtype_name(b->dtype);
  bool logical = kind == ExprKind::kAnd || kind == ExprKind::kOr;
  TESSEL_ICHECK(!logical || a->dtype == DType::kBool) << expr_kind_name(kind) << " needs bool operands";
  TESSEL_ICHECK(!is_bitwise(kind) || is_integer(a->dtype))
      << expr_kind_name(kind) << " needs integer operands";
  DType result = is_comparison(kind) || logical ? DType::kBool : a->dtype;
  switch (kind) {
#define TESSEL_X(name) \
  case ExprKind::k##name: return make_binary<ExprKind::k##name>(result, std::move(a), std::move(b));
    TESSEL_TIR_BINARY_EXPRS(TESSEL_X)
#undef TESSEL_X
    default: break;
  }
  TESSEL_ICHECK(false) << expr_kind_name(kind) << " is not a binary node";
  return {};
}

Expr bit_and(Expr a, Expr b) {
  return binary(ExprKind::kBitAnd, std::move(a), std::move(b));
}
Expr bit_or(Expr a, Expr b) {
  return binary(ExprKind::kBitOr, std::move(a), std::move(b));
}
Expr bit_xor(Expr a, Expr b) {
  return binary(ExprKind::kBitXor, std::move(a), std::move(b));
}
Expr shift_left(Expr a, Expr b) {
  return binary(ExprKind::kShl, std::move(a), std::move(b));
}
Expr shift_right(Expr a, Expr b) {
  return binary(ExprKind::kShr, std::move(a), std::move(b));
}
Expr add(Expr a, Expr b) {
  return binary(ExprKind::kAdd, std::move(a), std::move(b));
}
Expr sub(Expr a, Expr b) {
  return binary(ExprKind::kSub, std::move(a), std::move(b));
}
Expr mul(Expr a, Expr b) {
  return binary(ExprKind::kMul, std::move(a), std::move(b));
}
Expr div(Expr a, Expr b) {
  return binary(ExprKind::kDiv, std::move(a), std::move(b));
}
Expr floordiv(Expr a, Expr b) {
  return binary(ExprKind::kFloorDiv, std::move(a), std::move(b));
}
Expr floormod(Expr a, Expr b) {
  return binary(ExprKind::kFloorMod, std::move(a), std::move(b));
}
Expr min(Expr a, Expr b) {
  return binary(ExprKind::kMin, std::move(a), std::move(b));
}
Expr max(Expr a, Expr b) {
  return binary(ExprKind::kMax, std::move(a), std::move(b));
}
Expr eq(Expr a, Expr b) {
  return binary(ExprKind::kEQ, std::move(a), std::move(b));
}
Expr ne(Expr a, Expr b) {
  return binary(ExprKind::kNE, std::move(a), std::move(b));
}
Expr lt(Expr a, Expr b) {
  return binary(ExprKind::kLT, std::move(a), std::move(b));
}
Expr le(Expr a, Expr b) {
  return binary(ExprKind::kLE, std::move(a), std::move(b));
}
Expr gt(Expr a, Expr b) {
  return binary(ExprKind::kGT, std::move(a), std::move(b));
}
Expr ge(Expr a, Expr b) {
  return binary(ExprKind::kGE, std::move(a), std::move(b));
}
Expr logical_and(Expr a, Expr b) {
  return binary(ExprKind::kAnd, std::move(a), std::move(b));
}
Expr logical_or(Expr a, Expr b) {
  return binary(ExprKind::kOr, std::move(a), std::move(b));
}

Expr logical_not(Expr a) {
  TESSEL_ICHECK(a.defined() && a->dtype == DType::kBool) << "Not needs a bool operand";
  return make_ref<NotNode>(std::move(a));
}

Expr select(Expr cond, Expr t, Expr f) {
  TESSEL_ICHECK(cond.defined() && t.defined() && f.defined()) << "Select of an undefined operand";
  TESSEL_ICHECK(cond->dtype == DType::kBool) << "Select condition must be bool";
  TESSEL_ICHECK(t->dtype == f->dtype)
      << "Select of " << dtype_name(t->dtype) << " and " << dtype_name(f->dtype);
  return make_ref<SelectNode>(std::move(cond), std::move(t), std::move(f));
}

Expr cast(DType dtype, Expr value) {
  TESSEL_ICHECK(value.defined()) << "Cast of an undefined operand";
  if (value->dtype == dtype) return value;
  return make_ref<CastNode>(dtype, std::move(value));
}

Expr load(Buffer buffer, std::vector<Expr> indices) {
  TESSEL_ICHECK(int(indices.size()) == buffer->rank())
      << "load of " << buffer->name << " with " << indices.size() << " indices, rank " << buffer->rank();
  for (const Expr& index : indices)
    TESSEL_ICHECK(index.defined() && index->dtype == kIndexType) << "index of " << buffer->name << " not i64";
  return make_ref<LoadNode>(std::move(buffer), std::move(indices));
}

Expr call(Intrinsic op, std::vector<Expr> args) {
  TESSEL_ICHECK(op != Intrinsic::k_bitcast) << "bitcast is built by bitcast()";
  TESSEL_ICHECK(int(args.size()) == intrinsic_arity(op)) << intrinsic_name(op) << " arity";
  DType dtype = args[0]->dtype;
  for (const Expr& a : args) {
    TESSEL_ICHECK(a->dtype == dtype) << intrinsic_name(op) << " of mixed dtypes";
    TESSEL_ICHECK(is_float(a->dtype)) << intrinsic_name(op) << " of " << dtype_name(a->dtype);
  }
  bool predicate = op == Intrinsic::k_isnan || op == Intrinsic::k_isinf;
  return make_ref<CallNode>(predicate ? DType::kBool : dtype, op, std::move(args));
}

Expr bitcast(DType dtype, Expr value) {
  TESSEL_ICHECK(value.defined() && bitcast_allowed(value->dtype, dtype))
      << "bitcast of " << (value.defined() ? dtype_name(value->dtype) : "nothing") << " to "
      << dtype_name(dtype);
  return make_ref<CallNode>(dtype, Intrinsic::k_bitcast, std::vector<Expr>{std::move(value)});
}

Expr call_like(const CallNode& like, std::vector<Expr> args) {
  if (like.op == Intrinsic::k_bitcast) return bitcast(like.dtype, std::move(args.at(0)));
  return call(like.op, std::move(args));
}

Expr operator+(Expr a, int64_t b) {
  DType t = a->dtype;
  return add(std::move(a), imm_like(t, b));
}
Expr operator-(Expr a, int64_t b) {
  DType t = a->dtype;
  return sub(std::move(a), imm_like(t, b));
}
Expr operator*(Expr a, int64_t b) {
  DType t = a->dtype;
  return mul(std::move(a), imm_like(t, b));
}
Expr operator+(int64_t a, Expr b) {
  DType t = b->dtype;
  return add(imm_like(t, a), std::move(b));
}
Expr operator*(int64_t a, Expr b) {
  DType t = b->dtype;
  return mul(imm_like(t, a), std::move(b));
}
Expr floordiv(Expr a, int64_t b) {
  DType t = a->dtype;
  return floordiv(std::move(a), int_imm(b, t));
}
Expr floormod(Expr a, int64_t b) {
  DType t = a->dtype;
  return floormod(std::move(a), int_imm(b, t));
}

const int64_t* as_const_int(const Expr& e) {
  const IntImmNode* imm = e.as<IntImmNode>();
  return imm ? &imm->value : nullptr;
}
bool is_const_int(const Expr& e, int64_t value) {
  const int64_t* v = as_const_int(e);
  return v && *v == value;
}

}  // namespace tessel::tir
