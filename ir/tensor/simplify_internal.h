// Internals shared by the simplifier's files (const_fold, const_bound,
// affine_form, simplify_rules, simplify) and by int_set.cpp. Not a public
// module: passes use simplify.h and int_set.h.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <unordered_map>
#include <vector>

#include "ir/tensor/scalar_semantics.h"
#include "ir/tensor/simplify.h"

namespace tessel::tir::simplify_detail {

// An inclusive interval that every value of an expression lies in. Values are
// the ones the program computes (wrapped to the dtype), so an interval is
// always inside the dtype's range; [INT64_MIN, INT64_MAX] means "unknown" for
// i64.
struct Interval {
  int64_t lo, hi;
  bool is_const() const { return lo == hi; }
};
Interval dtype_range(DType t);  // bool: [0, 1]; floats: the i64 range (unused)
bool is_full_i64(const Interval& r);

using VarBounds = std::unordered_map<const VarNode*, ConstBound>;

// Integer and float scalar semantics (wrap_to, wrapping_add, floor_div, ...)
// come from scalar_semantics.h, shared with the interpreter.

// !(a op b) == (a op' b) for integers; (a op b) == (b op'' a).
inline ExprKind negated_comparison(ExprKind k) {
  switch (k) {
    case ExprKind::kEQ: return ExprKind::kNE;
    case ExprKind::kNE: return ExprKind::kEQ;
    case ExprKind::kLT: return ExprKind::kGE;
    case ExprKind::kLE: return ExprKind::kGT;
    case ExprKind::kGT: return ExprKind::kLE;
    default: return ExprKind::kLT;  // kGE
  }
}
inline ExprKind mirrored_comparison(ExprKind k) {
  switch (k) {
    case ExprKind::kLT: return ExprKind::kGT;
    case ExprKind::kLE: return ExprKind::kGE;
    case ExprKind::kGT: return ExprKind::kLT;
    case ExprKind::kGE: return ExprKind::kLE;
    default: return k;  // kEQ, kNE
  }
}

// Deep equality where variables and buffers compare by identity (the
// simplifier's notion of "the same expression"; unlike structural_equal,
// which matches variables by position of definition).
bool expr_equal(const Expr& a, const Expr& b);

// ---- Constant folding (const_fold.cpp). Each returns an undefined Expr when
// the operands are not all constants or the result is not foldable (division
// by zero, float to int out of range, f16/bf16 arithmetic, which the
// interpreter keeps in float precision until a store).
Expr fold_binary(ExprKind kind, const Expr& a, const Expr& b);
Expr fold_not(const Expr& a);
Expr fold_cast(DType to, const Expr& value);
Expr fold_call(Intrinsic op, const std::vector<Expr>& args);

// ---- Affine canonical form of i64 expressions (affine_form.cpp):
// sum(coeff * atom) + constant, atoms being non-affine subexpressions (vars,
// floordiv, loads...), like atoms merged, in order of first appearance.
// Coefficients wrap like i64 arithmetic, so the form is always equal to the
// expression it came from (as a value modulo 2^64).
struct AffineTerm {
  Expr atom;
  int64_t coeff;
};
struct Affine {
  std::vector<AffineTerm> terms;
  int64_t constant = 0;

  void add_term(const Expr& atom, int64_t coeff);
  void add(const Affine& other, int64_t scale = 1);
  // The same without wrap-around: false (and the form half-updated) when a
  // coefficient or the constant would leave int64, so that the form's
  // mathematical value stays the exact sum of the parts'.
  bool add_term_exact(const Expr& atom, int64_t coeff);
  bool add_exact(const Affine& other, int64_t scale = 1);
  bool is_const() const { return terms.empty(); }
};
Affine to_affine(const Expr& e);  // e of dtype i64
// Rewrites c*k*(x // c) + k*(x % c) into k*x (exact for every x).
void merge_floor_pairs(Affine* form);
// Positive terms first, then the subtracted ones, then the constant.
Expr from_affine(const Affine& form);

// ---- Bounds (const_bound.cpp).
Interval bound_of(const Expr& e, const VarBounds& vars);
Interval var_bound(const VarNode& v, const VarBounds& vars);
// The interval of the form's mathematical value, or nullopt when it might
// leave the i64 range (then the program's value may have wrapped). When it
// exists, the program's value equals the mathematical value.
std::optional<Interval> exact_bound(const Affine& form, const VarBounds& vars);
ConstBound to_const_bound(const Interval& r, DType t);
// Bounds of a variable over [min, min + extent): the least min and the
// greatest min + extent - 1 (just min when the extent is never positive).
ConstBound range_bound(const Expr& min, const Expr& extent, const VarBounds& vars);

// Bounds that cond implies for variables compared with constants (v < 8,
// 3 <= v, and conjunctions of them), given that cond evaluates to `holds`:
// calls set(v, tighter bound) for each. Ifs and selects refine their arms so.
void refine_bounds(const Expr& cond, bool holds, const VarBounds& vars,
                   const std::function<void(const VarNode*, ConstBound)>& set);

// ---- The rewriter (simplify_rules.cpp).
Expr simplify_expr(const Expr& e, const VarBounds& vars);

}  // namespace tessel::tir::simplify_detail
