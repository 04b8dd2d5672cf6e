// The affine canonical form of i64 index expressions (sum of coefficient *
// atom plus a constant) and the identity-based expression equality it merges
// like terms with.
#include <bit>

#include "ir/tensor/simplify_internal.h"

namespace tessel::tir::simplify_detail {

bool expr_equal(const Expr& a, const Expr& b) {
  if (a.same_as(b)) return true;
  if (!a.defined() || !b.defined()) return false;
  if (a->kind != b->kind || a->dtype != b->dtype) return false;
  const ExprNode& x = *a;
  const ExprNode& y = *b;
  if (is_binary(x.kind)) return expr_equal(binary_a(x), binary_a(y)) && expr_equal(binary_b(x), binary_b(y));
  auto all_equal = [](const std::vector<Expr>& p, const std::vector<Expr>& q) {
    if (p.size() != q.size()) return false;
    for (size_t i = 0; i < p.size(); ++i)
      if (!expr_equal(p[i], q[i])) return false;
    return true;
  };
  switch (x.kind) {
    case ExprKind::kIntImm:
      return static_cast<const IntImmNode&>(x).value == static_cast<const IntImmNode&>(y).value;
    case ExprKind::kFloatImm:
      return std::bit_cast<uint64_t>(static_cast<const FloatImmNode&>(x).value) ==
             std::bit_cast<uint64_t>(static_cast<const FloatImmNode&>(y).value);
    case ExprKind::kVar: return false;  // identity, checked above
    case ExprKind::kNot:
      return expr_equal(static_cast<const NotNode&>(x).a, static_cast<const NotNode&>(y).a);
    case ExprKind::kSelect: {
      const auto& p = static_cast<const SelectNode&>(x);
      const auto& q = static_cast<const SelectNode&>(y);
      return expr_equal(p.cond, q.cond) && expr_equal(p.true_value, q.true_value) &&
             expr_equal(p.false_value, q.false_value);
    }
    case ExprKind::kCast:
      return expr_equal(static_cast<const CastNode&>(x).value, static_cast<const CastNode&>(y).value);
    case ExprKind::kLoad: {
      const auto& p = static_cast<const LoadNode&>(x);
      const auto& q = static_cast<const LoadNode&>(y);
      return p.buffer.same_as(q.buffer) && all_equal(p.indices, q.indices);
    }
    case ExprKind::kCall: {
      const auto& p = static_cast<const CallNode&>(x);
      const auto& q = static_cast<const CallNode&>(y);
      return p.op == q.op && all_equal(p.args, q.args);
    }
    default: return false;
  }
}

void Affine::add_term(const Expr& atom, int64_t coeff) {
  if (coeff == 0) return;
  for (size_t i = 0; i < terms.size(); ++i) {
    if (!expr_equal(terms[i].atom, atom)) continue;
    terms[i].coeff = wrapping_add(terms[i].coeff, coeff);
    if (terms[i].coeff == 0) terms.erase(terms.begin() + long(i));
    return;
  }
  terms.push_back({atom, coeff});
}

void Affine::add(const Affine& other, int64_t scale) {
  for (const AffineTerm& t : other.terms) add_term(t.atom, wrapping_mul(t.coeff, scale));
  constant = wrapping_add(constant, wrapping_mul(other.constant, scale));
}

bool Affine::add_term_exact(const Expr& atom, int64_t coeff) {
  if (coeff == 0) return true;
  for (size_t i = 0; i < terms.size(); ++i) {
    if (!expr_equal(terms[i].atom, atom)) continue;
    if (__builtin_add_overflow(terms[i].coeff, coeff, &terms[i].coeff)) return false;
    if (terms[i].coeff == 0) terms.erase(terms.begin() + long(i));
    return true;
  }
  terms.push_back({atom, coeff});
  return true;
}

bool Affine::add_exact(const Affine& other, int64_t scale) {
  int64_t product;
  for (const AffineTerm& t : other.terms)
    if (__builtin_mul_overflow(t.coeff, scale, &product) || !add_term_exact(t.atom, product)) return false;
  return !__builtin_mul_overflow(other.constant, scale, &product) &&
         !__builtin_add_overflow(constant, product, &constant);
}

namespace {

// Accumulates scale * e into form; recursion follows the expression's depth.
void accumulate(const Expr& e, int64_t scale, Affine* form) {
  if (scale == 0) return;
  if (const int64_t* v = as_const_int(e)) {
    form->constant = wrapping_add(form->constant, wrapping_mul(*v, scale));
    return;
  }
  switch (e->kind) {
    case ExprKind::kAdd:
      accumulate(binary_a(*e), scale, form);
      accumulate(binary_b(*e), scale, form);
      return;
    case ExprKind::kSub:
      accumulate(binary_a(*e), scale, form);
      accumulate(binary_b(*e), wrapping_sub(0, scale), form);
      return;
    case ExprKind::kMul: {
      const Expr& a = binary_a(*e);
      const Expr& b = binary_b(*e);
      if (const int64_t* c = as_const_int(b)) return accumulate(a, wrapping_mul(scale, *c), form);
      if (const int64_t* c = as_const_int(a)) return accumulate(b, wrapping_mul(scale, *c), form);
      break;
    }
    default: break;
  }
  form->add_term(e, scale);
}

// x when e is x // c or x % c (of the given kind) with constant c > 0.
const Expr* floor_operand(const Expr& e, ExprKind kind, int64_t* c) {
  if (e->kind != kind) return nullptr;
  const int64_t* d = as_const_int(binary_b(*e));
  if (!d || *d <= 0) return nullptr;
  *c = *d;
  return &binary_a(*e);
}

// x // c as (y, d) with x // c == y // d: nested divisions by positive
// constants peeled ((f // 7) // 7 is f // 49); null where d would overflow.
const Expr* peeled_division(const Expr* x, int64_t* c) {
  int64_t d = 0;
  while (const Expr* inner = floor_operand(*x, ExprKind::kFloorDiv, &d)) {
    if (*c > (int64_t(1) << 31) || d > (int64_t(1) << 31)) return nullptr;
    *c *= d;
    x = inner;
  }
  return x;
}

// k * c * (x // c) + k * (x % c) -> k * x; the division may be written
// through x's own divisions: 49 * (f // 49) + 7 * ((f // 7) % 7) is 7 * (f // 7)
// (a flat index split into three dimensions, read back as one).
bool merge_one_floor_pair(Affine* form) {
  for (size_t i = 0; i < form->terms.size(); ++i) {
    int64_t c = 0;
    const Expr* x = floor_operand(form->terms[i].atom, ExprKind::kFloorDiv, &c);
    if (!x || !(x = peeled_division(x, &c))) continue;
    for (size_t j = 0; j < form->terms.size(); ++j) {
      int64_t c2 = 0;
      const Expr* x2 = floor_operand(form->terms[j].atom, ExprKind::kFloorMod, &c2);
      if (!x2) continue;
      int64_t divisor = c2;
      const Expr* base = peeled_division(x2, &divisor);
      if (!base || divisor != c || !expr_equal(*x, *base)) continue;
      int64_t k = form->terms[j].coeff;
      if (form->terms[i].coeff != wrapping_mul(k, c2)) continue;
      Expr operand = *x2;  // keep it alive: erasing the terms may release it
      form->terms.erase(form->terms.begin() + long(std::max(i, j)));
      form->terms.erase(form->terms.begin() + long(std::min(i, j)));
      accumulate(operand, k, form);
      return true;
    }
  }
  return false;
}

Expr scaled(const Expr& atom, int64_t coeff) {
  return coeff == 1 ? atom : mul(atom, int_imm(coeff));
}

}  // namespace

Affine to_affine(const Expr& e) {
  Affine form;
  accumulate(e, 1, &form);
  return form;
}

void merge_floor_pairs(Affine* form) {
  // Each merge replaces two atoms by the smaller operand's terms, so this ends.
  while (merge_one_floor_pair(form)) {
  }
}

Expr from_affine(const Affine& form) {
  const int64_t kMin = INT64_MIN;
  Expr out;
  for (const AffineTerm& t : form.terms)
    if (t.coeff > 0 || t.coeff == kMin)
      out = out.defined() ? add(out, scaled(t.atom, t.coeff)) : scaled(t.atom, t.coeff);
  int64_t constant = form.constant;
  if (!out.defined() && constant > 0 && !form.terms.empty()) {
    out = int_imm(constant);
    constant = 0;
  }
  for (const AffineTerm& t : form.terms) {
    if (t.coeff >= 0 || t.coeff == kMin) continue;
    out = out.defined() ? sub(out, scaled(t.atom, -t.coeff)) : scaled(t.atom, t.coeff);
  }
  if (!out.defined()) return int_imm(constant);
  if (constant > 0) return add(out, int_imm(constant));
  if (constant < 0 && constant != kMin) return sub(out, int_imm(-constant));
  if (constant == kMin) return add(out, int_imm(constant));
  return out;
}

}  // namespace tessel::tir::simplify_detail
