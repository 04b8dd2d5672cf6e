// Randomized soundness of the simplifier and of eval_set: random index
// expressions (affine, floordiv, floormod, min, max, select) over 2-3 bounded
// variables, evaluated at every point of their domain before and after
// simplification; bounds and relaxed sets must contain every value. Random
// loop nests interpret the same before and after.
#include <gtest/gtest.h>

#include <optional>
#include <random>
#include <unordered_map>

#include "ir/tensor/int_set.h"
#include "ir/tensor/interpreter.h"
#include "ir/tensor/printer.h"
#include "ir/tensor/scalar_semantics.h"
#include "ir/tensor/simplify_internal.h"

namespace tessel::tir {
namespace {

using Env = std::unordered_map<const VarNode*, int64_t>;

// The scalar operations are the IR's own (scalar_semantics.h, shared with the
// folder and the interpreter; FloorDivisionIsExact checks floor division against
// exact arithmetic): what this oracle adds is an independent walk of the
// expression, against which the simplifier's rewrites are checked.
std::optional<int64_t> eval_binary(ExprKind kind, int64_t x, int64_t y) {
  if (kind == ExprKind::kAnd) return x && y;
  if (kind == ExprKind::kOr) return x || y;
  if (is_comparison(kind)) return apply_comparison(kind, x, y);
  return apply_int_arith(kind, x, y);
}

// A tiny evaluator of integer expressions (any integer dtype and bool, with
// the interpreter's wrap-around); nullopt on division by zero.
std::optional<int64_t> eval(const Expr& e, const Env& env) {
  if (const int64_t* v = as_const_int(e)) return *v;
  if (const VarNode* v = e.as<VarNode>()) return env.at(v);
  if (const NotNode* n = e.as<NotNode>()) {
    std::optional<int64_t> a = eval(n->a, env);
    return a ? std::optional<int64_t>(*a == 0) : std::nullopt;
  }
  if (const SelectNode* s = e.as<SelectNode>()) {
    std::optional<int64_t> c = eval(s->cond, env);
    if (!c) return std::nullopt;
    return eval(*c ? s->true_value : s->false_value, env);
  }
  if (const CastNode* c = e.as<CastNode>()) {
    std::optional<int64_t> v = eval(c->value, env);
    return v ? std::optional<int64_t>(wrap_to(c->dtype, *v)) : std::nullopt;
  }
  EXPECT_TRUE(is_binary(e->kind)) << "unexpected " << expr_kind_name(e->kind);
  std::optional<int64_t> a = eval(binary_a(*e), env), b = eval(binary_b(*e), env);
  if (!a || !b) return std::nullopt;
  std::optional<int64_t> r = eval_binary(e->kind, *a, *b);
  return r ? std::optional<int64_t>(wrap_to(e->dtype, *r)) : std::nullopt;
}

struct Domain {
  std::vector<Var> vars;
  std::vector<int64_t> lo, extent;
};

class ExprGen {
 public:
  // With `near_limits`, some i64 constants and factors sit near 2^62, so that
  // arithmetic wraps around.
  explicit ExprGen(uint64_t seed, bool near_limits = false) : rng_(seed), near_limits_(near_limits) {}
  int64_t pick(int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng_); }

  // 2-3 variables of dtype t over small ranges starting in [lo_min, lo_max].
  Domain domain(DType t = kIndexType, int64_t lo_min = -4, int64_t lo_max = 4) {
    Domain d;
    int n = int(pick(2, 3));
    for (int i = 0; i < n; ++i) {
      d.vars.push_back(var(std::string(1, char('x' + i)), t));
      d.lo.push_back(pick(lo_min, lo_max));
      d.extent.push_back(pick(1, 6));
    }
    return d;
  }

  Expr index(const Domain& d, int depth) {
    if (depth == 0 || pick(0, 9) < 2) return leaf(d);
    static constexpr int64_t kDivisors[] = {1, 2, 3, 4, 8, 16, -3};
    switch (pick(0, 8)) {
      case 0: return index(d, depth - 1) + index(d, depth - 1);
      case 1: return index(d, depth - 1) - index(d, depth - 1);
      case 2:
        return index(d, depth - 1) *
               (near_limits_ && !pick(0, 5) ? (int64_t(1) << 61) + pick(-2, 2) : pick(-4, 4));
      case 3: return index(d, depth - 1) * index(d, depth - 1);
      case 4: return floordiv(index(d, depth - 1), kDivisors[pick(0, 6)]);
      case 5: return floormod(index(d, depth - 1), kDivisors[pick(0, 6)]);
      case 6: return min(index(d, depth - 1), index(d, depth - 1));
      case 7: return max(index(d, depth - 1), index(d, depth - 1));
      default: return select(condition(d, depth - 1), index(d, depth - 1), index(d, depth - 1));
    }
  }

  Expr leaf(const Domain& d) {
    DType t = d.vars[0]->dtype;
    if (pick(0, 3)) return d.vars[pick(0, int64_t(d.vars.size()) - 1)];
    static constexpr int64_t kLarge[] = {INT64_MAX, INT64_MIN, int64_t(1) << 62, 3 - (int64_t(1) << 62),
                                         INT64_MAX / 3};
    if (near_limits_ && !pick(0, 3)) return int_imm(kLarge[pick(0, 4)]);
    return t == kIndexType ? int_imm(pick(-8, 8)) : int_imm(wrap_to(t, pick(-130, 130)), t);
  }

  Expr condition(const Domain& d, int depth) {
    static constexpr ExprKind kCompares[] = {ExprKind::kEQ, ExprKind::kNE, ExprKind::kLT,
                                             ExprKind::kLE, ExprKind::kGT, ExprKind::kGE};
    switch (pick(0, 5)) {
      case 0: return condition(d, depth - 1 < 0 ? 0 : depth - 1) && condition(d, 0);
      case 1: return logical_not(condition(d, 0)) || condition(d, 0);
      default: return binary(kCompares[pick(0, 5)], index(d, depth), index(d, depth));
    }
  }

 private:
  std::mt19937_64 rng_;
  bool near_limits_;
};

// Calls f(env) at every point of the variables [first, last) of d, on top of base.
template <typename F>
void for_each_point(const Domain& d, size_t first, size_t last, Env env, const F& f) {
  if (first == last) return f(env);
  for (int64_t v = d.lo[first]; v < d.lo[first] + d.extent[first]; ++v) {
    env[d.vars[first].get()] = v;
    for_each_point(d, first + 1, last, env, f);
  }
}

// Simplifies e under d's bounds and checks it against the original at every
// point; the bounds of e must hold every value (and exist when `bounded`).
void check_simplify(const Domain& d, const Expr& e, bool bounded) {
  Analyzer an;
  for (size_t i = 0; i < d.vars.size(); ++i) an.bind(d.vars[i], d.lo[i], d.extent[i]);
  Expr s = an.simplify(e);
  ASSERT_TRUE(
      simplify_detail::expr_equal(an.simplify(s), s))  // a canonical form: simplifying again changes nothing
      << to_string(e) << "  simplified to  " << to_string(s) << "  then to  " << to_string(an.simplify(s));
  ConstBound bound = an.bound(e);
  ASSERT_TRUE(!bounded || (bound.min && bound.max)) << to_string(e);
  for_each_point(d, 0, d.vars.size(), {}, [&](const Env& env) {
    std::optional<int64_t> before = eval(e, env), after = eval(s, env);
    ASSERT_TRUE(before.has_value());
    ASSERT_EQ(before, after) << to_string(e) << "  simplified to  " << to_string(s);
    ASSERT_TRUE(!bound.min || *bound.min <= *before) << to_string(e);
    ASSERT_TRUE(!bound.max || *bound.max >= *before) << to_string(e);
  });
}

// eval_set of e relaxing the variables from `split` on; every value must be in the set.
void check_relaxed_set(const Domain& d, const Expr& e, size_t split, bool bounded) {
  Analyzer an;
  RelaxMap relax;
  for (size_t i = 0; i < d.vars.size(); ++i) {
    if (i < split) an.bind(d.vars[i], d.lo[i], d.extent[i]);
    if (i >= split) relax[d.vars[i].get()] = Range{int_imm(d.lo[i]), int_imm(d.extent[i])};
  }
  IntSet set = eval_set(e, relax, an);
  ASSERT_TRUE(!bounded || set.bounded) << to_string(e);  // bounded: every variable has a range
  if (!set.bounded) return;
  ASSERT_GE(set.stride, 1);
  Expr set_max = set.max();
  for_each_point(d, 0, split, {}, [&](const Env& outer) {
    std::optional<int64_t> lo = eval(set.min, outer), hi = eval(set_max, outer);
    ASSERT_TRUE(lo && hi);
    for_each_point(d, split, d.vars.size(), outer, [&](const Env& env) {
      int64_t v = *eval(e, env);
      ASSERT_TRUE(*lo <= v && v <= *hi && (__int128(v) - *lo) % set.stride == 0)
          << to_string(e) << " = " << v << " outside [" << to_string(set.min) << ", " << to_string(set_max)
          << "] stride " << set.stride << " = [" << *lo << ", " << *hi << "]";
    });
  });
}

TEST(TirSimplifySoundness, SimplifiedExpressionsAgreeEverywhere) {
  ExprGen gen(20261202);
  for (int round = 0; round < 400 && !HasFatalFailure(); ++round) {
    Domain d = gen.domain();
    check_simplify(d, gen.index(d, int(gen.pick(1, 4))), true);
  }
}

// i8 and i32 arithmetic wraps: folding, identities and bounds must follow.
TEST(TirSimplifySoundness, NarrowIntegersWrapLikeTheInterpreter) {
  ExprGen gen(31);
  for (int round = 0; round < 300 && !HasFatalFailure(); ++round) {
    Domain d = gen.domain(round % 2 ? DType::kI8 : DType::kI32, -128, 121);
    Expr e = gen.index(d, int(gen.pick(1, 4)));
    check_simplify(d, gen.pick(0, 1) ? cast(kIndexType, e) : e, false);
  }
}

// i64 arithmetic that wraps: nothing may be decided from bounds that overflowed.
TEST(TirSimplifySoundness, WrapAroundNearTheI64Limits) {
  ExprGen gen(4242, true);
  for (int round = 0; round < 300 && !HasFatalFailure(); ++round) {
    Domain d = gen.domain();
    Expr e = gen.index(d, int(gen.pick(1, 4)));
    check_simplify(d, e, false);
    check_relaxed_set(d, e, size_t(gen.pick(0, int64_t(d.vars.size()) - 1)), false);
  }
}

TEST(TirSimplifySoundness, RelaxedSetsContainEveryValue) {
  ExprGen gen(7);
  for (int round = 0; round < 300 && !HasFatalFailure(); ++round) {
    Domain d = gen.domain();
    Expr e = gen.index(d, int(gen.pick(1, 4)));
    // The variables before the split stay symbolic, bound in the analyzer.
    check_relaxed_set(d, e, size_t(gen.pick(0, int64_t(d.vars.size()) - 1)), true);
  }
}

// The shared floor division against exact 128-bit arithmetic: a == q*b + r
// with r of b's sign and |r| < |b|; only INT64_MIN // -1 wraps (to INT64_MIN).
TEST(TirSimplifySoundness, FloorDivisionIsExact) {
  const int64_t values[] = {INT64_MIN, INT64_MIN + 1, -17,      -16, -3, -1, 0, 1, 3, 16,
                            17,        INT64_MAX - 1, INT64_MAX};
  for (int64_t a : values) {
    for (int64_t b : values) {
      if (b == 0) continue;
      int64_t q = floor_div(a, b), r = floor_mod(a, b);
      if (a == INT64_MIN && b == -1) {  // the quotient 2^63 wraps, like the negation it is
        EXPECT_EQ(q, INT64_MIN);
        EXPECT_EQ(r, 0);
        continue;
      }
      EXPECT_EQ(__int128(q) * b + r, __int128(a)) << a << " // " << b << " = " << q;
      EXPECT_TRUE(r == 0 || (r < 0) == (b < 0)) << a << " mod " << b << " = " << r;
      EXPECT_LT(r < 0 ? -__int128(r) : __int128(r), b < 0 ? -__int128(b) : __int128(b)) << a << " mod " << b;
    }
  }
}

// Random loop nests (extents 0 to 3, so extent-1 and empty loops are common)
// with ifs and stores B[index % 16] = f32(value) over the loop variables.
Stmt random_nest(ExprGen& gen, Domain& scope, const Buffer& out, int depth) {
  int choice = depth > 0 ? int(gen.pick(0, 4)) : 4;
  if (choice <= 1) {  // a loop, from an expression of the loops around it when there are some
    Var v = var("v" + std::to_string(scope.vars.size()));
    Expr min = scope.vars.empty() || gen.pick(0, 1) ? int_imm(gen.pick(-2, 2)) : gen.index(scope, 1);
    Expr extent = int_imm(gen.pick(0, 3));
    scope.vars.push_back(v);
    Stmt body = random_nest(gen, scope, out, depth - 1);
    scope.vars.pop_back();
    return make_for(v, min, extent, ForKind::kSerial, body);
  }
  if (choice == 2) {
    Expr cond = gen.condition(scope, 1);
    Stmt then_case = random_nest(gen, scope, out, depth - 1);
    return make_if(cond, then_case, gen.pick(0, 1) ? random_nest(gen, scope, out, depth - 1) : Stmt());
  }
  if (choice == 3)
    return make_seq({random_nest(gen, scope, out, depth - 1), random_nest(gen, scope, out, depth - 1)});
  return make_store(out, cast(DType::kF32, gen.index(scope, 2)), {floormod(gen.index(scope, 2), 16)});
}

TEST(TirSimplifySoundness, StatementsInterpretTheSame) {
  ExprGen gen(99);
  Buffer out = make_buffer("B", DType::kF32, {16});
  for (int round = 0; round < 150 && !HasFatalFailure(); ++round) {
    Var t = var("t"), v = var("v");
    Domain scope;
    scope.vars = {v};
    Stmt zero = make_for(t, int_imm(0), int_imm(16), ForKind::kSerial, make_store(out, float_imm(0.0), {t}));
    Stmt nest = make_for(v, int_imm(gen.pick(-3, 3)), int_imm(gen.pick(1, 4)), ForKind::kSerial,
                         random_nest(gen, scope, out, 4));
    PrimFunc f = make_prim_func("random", {}, {out}, make_root_block(make_seq({zero, nest}), {}));
    PrimFunc g = simplify(f);
    ASSERT_EQ(interpret(f, {})[0].to_f64_vector(), interpret(g, {})[0].to_f64_vector())
        << to_string(f) << "\nsimplified to\n"
        << to_string(g);
  }
}

}  // namespace
}  // namespace tessel::tir
