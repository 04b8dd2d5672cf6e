// split: one loop into a nest of loops whose extents are the given factors.
// Errors: split.loop_not_found, split.loop_kind, split.non_constant_extent,
// split.too_few_factors, split.bad_factor, split.too_small, split.not_divisible.
#include "ir/tensor/functor.h"
#include "schedules/primitives/loop_analysis.h"
#include "schedules/primitives/loop_primitives.h"
#include "schedules/tree_query.h"

namespace tessel::sched {

using namespace tir;

namespace {

std::string list_of(const std::vector<int64_t>& values) {
  std::string s = "[";
  for (size_t i = 0; i < values.size(); ++i) s += (i ? ", " : "") + std::to_string(values[i]);
  return s + "]";
}

// The factors with a -1 replaced by ceildiv(extent, product of the others).
std::vector<int64_t> resolve_factors(const ForNode& loop, int64_t extent, std::vector<int64_t> factors,
                                     bool exact) {
  std::string what = "split of " + describe_loop(loop) + " by " + list_of(factors);
  if (factors.size() < 2)
    throw ScheduleError("split.too_few_factors", what + ": at least two factors are needed");
  int inferred = -1;
  int64_t known = 1;
  for (size_t i = 0; i < factors.size(); ++i) {
    if (factors[i] == -1 && inferred < 0) {
      inferred = int(i);
      continue;
    }
    if (factors[i] <= 0) {
      throw ScheduleError("split.bad_factor",
                          what + ": factors must be positive (one may be -1, to be inferred)");
    }
    if (__builtin_mul_overflow(known, factors[i], &known)) {
      throw ScheduleError("split.bad_factor", what + ": the factors' product overflows");
    }
  }
  if (inferred >= 0) factors[inferred] = (extent + known - 1) / known;
  int64_t product = inferred >= 0 ? known * factors[inferred] : known;  // < known + extent: no overflow
  if (product < extent) {
    throw ScheduleError("split.too_small", what + ": the factors multiply to " + std::to_string(product) +
                                               ", less than the extent");
  }
  if (exact && product != extent) {
    throw ScheduleError("split.not_divisible", what + ": an exact split needs factors that multiply to " +
                                                   std::to_string(extent) + ", not " +
                                                   std::to_string(product));
  }
  return factors;
}

}  // namespace

int64_t constant_extent(const ForNode& loop, const std::string& primitive) {
  const int64_t* extent = as_const_int(loop.extent);
  if (!extent) {
    throw ScheduleError(primitive + ".non_constant_extent",
                        primitive + ": loop " + loop.var->name + " has no constant extent");
  }
  return *extent;
}

SplitResult split(const PrimFunc& func, const VarNode* loop_var, const std::vector<int64_t>& given,
                  bool exact) {
  const ForNode& loop = loop_or_throw(func, loop_var, "split");
  if (loop.for_kind != ForKind::kSerial) {
    throw ScheduleError("split.loop_kind", "split: " + describe_loop(loop) + " is " +
                                               std::string(for_kind_name(loop.for_kind)) +
                                               "; only serial loops are split");
  }
  int64_t extent = constant_extent(loop, "split");
  std::vector<int64_t> factors = resolve_factors(loop, extent, given, exact);

  // New variables outermost first; combined = ((v0 * f1 + v1) * f2 + v2) ...
  std::vector<Var> vars;
  Expr combined;
  int64_t product = 1;
  Analyzer analyzer;
  for (size_t i = 0; i < factors.size(); ++i) {
    vars.push_back(var(loop.var->name + "_" + std::to_string(i)));
    analyzer.bind(vars.back(), 0, factors[i]);
    combined = combined.defined() ? combined * factors[i] + vars.back() : Expr(vars.back());
    product *= factors[i];
  }
  Stmt body = substitute(loop.body, VarMap{{loop.var.get(), loop.min + combined}});
  Expr guard = product == extent ? Expr() : lt(combined, int_imm(extent));
  body = simplify_bindings_below(body, analyzer, guard);
  for (size_t i = factors.size(); i-- > 0;) {
    body = make_for(vars[i], int_imm(0), int_imm(factors[i]), ForKind::kSerial, body);
  }
  return {replace_node(func, &loop, body), vars};
}

}  // namespace tessel::sched
