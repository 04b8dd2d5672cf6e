// Tensor IR expressions: constants, variables, arithmetic, comparisons, logic,
// Select, Cast, buffer loads and intrinsic calls. Scalar only: vector code is
// the backends' business (a For of kind vectorized), never an IR type.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ir/core/dtype.h"
#include "ir/core/ref.h"
#include "ir/tensor/buffer.h"

namespace tessel::tir {

// The node list. Every visitor, mutator, printer and comparison switches on it.
// clang-format off
#define TESSEL_TIR_BINARY_EXPRS(X) \
  X(Add) X(Sub) X(Mul) X(Div) X(FloorDiv) X(FloorMod) X(Min) X(Max) \
  X(BitAnd) X(BitOr) X(BitXor) X(Shl) X(Shr) \
  X(EQ) X(NE) X(LT) X(LE) X(GT) X(GE) X(And) X(Or)

enum class ExprKind : uint8_t {
  kIntImm, kFloatImm, kVar,
#define TESSEL_X(name) k##name,
  TESSEL_TIR_BINARY_EXPRS(TESSEL_X)
#undef TESSEL_X
  kNot, kSelect, kCast, kLoad, kCall,
};
// clang-format on

std::string_view expr_kind_name(ExprKind kind);  // "Add", "FloorDiv", ...

struct ExprNode : RefCounted {
  ExprNode(ExprKind kind, DType dtype) : kind(kind), dtype(dtype) {}
  const ExprKind kind;
  const DType dtype;
};
using Expr = Ref<const ExprNode>;

// The type of every index, loop bound and loop variable.
inline constexpr DType kIndexType = DType::kI64;

struct IntImmNode : ExprNode {
  static constexpr ExprKind kKind = ExprKind::kIntImm;
  IntImmNode(DType dtype, int64_t value) : ExprNode(kKind, dtype), value(value) {}
  const int64_t value;  // i8..i64 and bool (0 or 1)
};

struct FloatImmNode : ExprNode {
  static constexpr ExprKind kKind = ExprKind::kFloatImm;
  FloatImmNode(DType dtype, double value) : ExprNode(kKind, dtype), value(value) {}
  const double value;
};

// A variable has identity: two VarNodes with the same name are different
// variables. The name is only a hint for printing.
struct VarNode : ExprNode {
  static constexpr ExprKind kKind = ExprKind::kVar;
  VarNode(std::string name, DType dtype) : ExprNode(kKind, dtype), name(std::move(name)) {}
  const std::string name;
};
using Var = Ref<const VarNode>;

// Binary nodes share one layout; the kind tells them apart. Comparisons, And
// and Or have dtype bool; the others have the dtype of their operands. And and
// Or short-circuit, as in C.
template <ExprKind K>
struct BinaryNode : ExprNode {
  static constexpr ExprKind kKind = K;
  BinaryNode(DType dtype, Expr a, Expr b) : ExprNode(K, dtype), a(std::move(a)), b(std::move(b)) {}
  const Expr a, b;
};
#define TESSEL_X(name) using name##Node = BinaryNode<ExprKind::k##name>;
TESSEL_TIR_BINARY_EXPRS(TESSEL_X)
#undef TESSEL_X

bool is_binary(ExprKind kind);
bool is_comparison(ExprKind kind);  // EQ NE LT LE GT GE
// BitAnd BitOr BitXor Shl Shr: integer operands only. A shift by a negative
// amount or by 64 or more gives 0 (Shr of a negative value: -1); a shift
// within the int64 the IR holds integers in then wraps to the dtype, so that
// shifting a narrow type by its width or more also gives 0.
bool is_bitwise(ExprKind kind);
// Operands of any binary node, without knowing its kind.
const Expr& binary_a(const ExprNode& node);
const Expr& binary_b(const ExprNode& node);

struct NotNode : ExprNode {
  static constexpr ExprKind kKind = ExprKind::kNot;
  explicit NotNode(Expr a) : ExprNode(kKind, DType::kBool), a(std::move(a)) {}
  const Expr a;
};

// cond ? true_value : false_value. Lazy, like C's ?: operator: only the chosen
// operand is evaluated, so `select(in_bounds, X[i - 1], 0)` is the way to read
// padding (the interpreter and every backend must keep this; a vectorising
// backend masks the loads).
struct SelectNode : ExprNode {
  static constexpr ExprKind kKind = ExprKind::kSelect;
  SelectNode(Expr cond, Expr t, Expr f)
      : ExprNode(kKind, t->dtype),
        cond(std::move(cond)),
        true_value(std::move(t)),
        false_value(std::move(f)) {}
  const Expr cond, true_value, false_value;
};

// Conversion as C++ would do it (float to int truncates; to bool is != 0).
struct CastNode : ExprNode {
  static constexpr ExprKind kKind = ExprKind::kCast;
  CastNode(DType dtype, Expr value) : ExprNode(kKind, dtype), value(std::move(value)) {}
  const Expr value;
};

// buffer[indices...], one index per dimension of the buffer.
struct LoadNode : ExprNode {
  static constexpr ExprKind kKind = ExprKind::kLoad;
  LoadNode(Buffer buffer, std::vector<Expr> indices)
      : ExprNode(kKind, buffer->dtype), buffer(std::move(buffer)), indices(std::move(indices)) {}
  const Buffer buffer;
  const std::vector<Expr> indices;
};

// Pure math functions; all take and return one float dtype, except the
// predicates (isnan, isinf) that return bool, and bitcast: the bits of a
// value read as another dtype of the same size (built by bitcast() alone).
// clang-format off
#define TESSEL_TIR_INTRINSICS(X)                                                                   \
  X(exp) X(log) X(sqrt) X(rsqrt) X(tanh) X(erf) X(sigmoid) X(pow) X(fabs) X(floor) X(ceil)     \
  X(round) X(sin) X(cos) X(tan) X(asin) X(acos) X(atan) X(sinh) X(cosh) X(asinh) X(acosh)      \
  X(atanh) X(fmod) X(isnan) X(isinf) X(bitcast)
// clang-format on

enum class Intrinsic : uint8_t {
#define TESSEL_X(name) k_##name,
  TESSEL_TIR_INTRINSICS(TESSEL_X)
#undef TESSEL_X
};
std::string_view intrinsic_name(Intrinsic op);  // "exp", ...
int intrinsic_arity(Intrinsic op);              // pow and fmod take 2

struct CallNode : ExprNode {
  static constexpr ExprKind kKind = ExprKind::kCall;
  CallNode(DType dtype, Intrinsic op, std::vector<Expr> args)
      : ExprNode(kKind, dtype), op(op), args(std::move(args)) {}
  const Intrinsic op;
  const std::vector<Expr> args;
};

// ---- Builders. They check dtypes (internal errors: lowering builds these) and
// fold nothing; the simplifier does that.

Var var(std::string name, DType dtype = kIndexType);
Expr int_imm(int64_t value, DType dtype = kIndexType);
Expr float_imm(double value, DType dtype = DType::kF32);
Expr const_of(DType dtype, double value);  // an IntImm or FloatImm of dtype
Expr bool_imm(bool value);

Expr binary(ExprKind kind, Expr a, Expr b);  // any binary kind
Expr add(Expr a, Expr b);
Expr sub(Expr a, Expr b);
Expr mul(Expr a, Expr b);
Expr div(Expr a, Expr b);  // floats: a / b; integers: truncating, as C
Expr floordiv(Expr a, Expr b);
Expr floormod(Expr a, Expr b);
Expr min(Expr a, Expr b);
Expr max(Expr a, Expr b);
Expr eq(Expr a, Expr b);
Expr ne(Expr a, Expr b);
Expr lt(Expr a, Expr b);
Expr le(Expr a, Expr b);
Expr gt(Expr a, Expr b);
Expr ge(Expr a, Expr b);
Expr logical_and(Expr a, Expr b);
Expr logical_or(Expr a, Expr b);
Expr logical_not(Expr a);
Expr bit_and(Expr a, Expr b);
Expr bit_or(Expr a, Expr b);
Expr bit_xor(Expr a, Expr b);
Expr shift_left(Expr a, Expr b);
Expr shift_right(Expr a, Expr b);  // arithmetic on signed dtypes, logical on unsigned ones
Expr select(Expr cond, Expr t, Expr f);
Expr cast(DType dtype, Expr value);  // returns value itself when it already has dtype
Expr load(Buffer buffer, std::vector<Expr> indices);
Expr call(Intrinsic op, std::vector<Expr> args);
// value's bits as `dtype` (bitcast_allowed in ir/core/dtype.h).
Expr bitcast(DType dtype, Expr value);
// `like`'s call over new arguments (a bitcast keeps its dtype).
Expr call_like(const CallNode& like, std::vector<Expr> args);

// Index arithmetic reads better with operators. An int64 operand becomes a
// constant of the other operand's dtype. (No operator==: Refs compare by
// identity with same_as, and eq() builds the comparison.)
inline Expr operator+(Expr a, Expr b) {
  return add(std::move(a), std::move(b));
}
inline Expr operator-(Expr a, Expr b) {
  return sub(std::move(a), std::move(b));
}
inline Expr operator*(Expr a, Expr b) {
  return mul(std::move(a), std::move(b));
}
Expr operator+(Expr a, int64_t b);
Expr operator-(Expr a, int64_t b);
Expr operator*(Expr a, int64_t b);
Expr operator+(int64_t a, Expr b);
Expr operator*(int64_t a, Expr b);
Expr floordiv(Expr a, int64_t b);
Expr floormod(Expr a, int64_t b);
inline Expr operator<(Expr a, Expr b) {
  return lt(std::move(a), std::move(b));
}
inline Expr operator<=(Expr a, Expr b) {
  return le(std::move(a), std::move(b));
}
inline Expr operator>(Expr a, Expr b) {
  return gt(std::move(a), std::move(b));
}
inline Expr operator>=(Expr a, Expr b) {
  return ge(std::move(a), std::move(b));
}
inline Expr operator&&(Expr a, Expr b) {
  return logical_and(std::move(a), std::move(b));
}
inline Expr operator||(Expr a, Expr b) {
  return logical_or(std::move(a), std::move(b));
}

// The constant value of an integer immediate, if e is one. The pointer lives
// as long as e's node: not on a temporary (simplify(x) may own the only
// reference), so name the Expr first.
const int64_t* as_const_int(const Expr& e);
const int64_t* as_const_int(Expr&& e) = delete;
bool is_const_int(const Expr& e, int64_t value);

}  // namespace tessel::tir
