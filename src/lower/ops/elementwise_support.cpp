// The index and scalar helpers of the elementwise, movement and shape compute
// definitions (declared in elem_lowerings.h).
#include <algorithm>
#include <limits>

#include "ir/core/diagnostics.h"
#include "ir/graph/op_registry.h"
#include "ir/graph/ops/shape_helpers.h"
#include "ir/tensor/float_bounds.h"
#include "ir/tensor/functor.h"
#include "ir/tensor/simplify.h"
#include "src/lower/ops/elem_lowerings.h"

namespace tessel::lower {

using namespace tir;

namespace {

// Above this many nodes duplicated per element, a multiply-read input is
// computed once into a block instead of being inlined at every use.
constexpr int kMaxDuplicatedNodes = 128;

Index fresh_index(int rank) {
  Index idx;
  for (int d = 0; d < rank; ++d) idx.push_back(var("p" + std::to_string(d)));
  return idx;
}

TensorExpr materialize(LowerContext& ctx, const graph::Node& node, const TensorExpr& t) {
  return ctx.materialize(node.name.empty() ? node.op : node.name, t);
}

}  // namespace

void inherit_flat_iteration(const graph::Node& node, const std::vector<TensorExpr>& inputs, TensorExpr& out) {
  out.flat_tail = 0;
  out.flat_head = 0;
  out.flat_positions = false;
  if (graph::pattern_of(node) > graph::OpPattern::kBroadcast) return;
  for (const TensorExpr& in : inputs)
    out.flat_positions = out.flat_positions || (in.at && in.flat_positions && in.shape == out.shape);
  out.parts = {};
  for (const TensorExpr& in : inputs)
    if (in.at && in.parts.split() && in.shape == out.shape) {
      out.parts = in.parts;
      break;
    }
  for (const TensorExpr& in : inputs)
    if (in.at && in.flat_tail && in.shape == out.shape) {
      out.flat_tail = in.flat_tail;
      out.flat_head = in.flat_head;
      return;
    }
}

// A value in parts: the largest part's, each simplified on its range (a
// block materialising it evaluates one part per element).
int expr_size(const TensorExpr& t) {
  auto count = [](const Expr& e) {
    int n = 0;
    walk_exprs(e, [&n](const Expr&) { ++n; });
    return n;
  };
  Index idx = fresh_index(t.rank());
  if (!t.parts.split() || t.parts.axis >= t.rank()) return count(t.at(idx));
  Var along = var("part");
  idx[size_t(t.parts.axis)] = along;
  int most = 0;
  int64_t start = 0;
  for (int64_t end : t.parts.ends) {
    Analyzer analyzer;
    analyzer.bind(along, start, end - start);
    most = std::max(most, count(analyzer.simplify(t.at(idx))));
    start = end;
  }
  return most;
}

TensorExpr share(LowerContext& ctx, const graph::Node& node, const TensorExpr& t, int uses) {
  if (t.buffer.defined() || uses <= 1) return t;
  if ((uses - 1) * expr_size(t) <= kMaxDuplicatedNodes) return t;
  return materialize(ctx, node, t);
}

namespace {

bool calls_intrinsic(const TensorExpr& t) {
  bool calls = false;
  walk_exprs(t.at(fresh_index(t.rank())), [&calls](const Expr& e) { calls = calls || e.as<CallNode>(); });
  return calls;
}

// Whether the output's storage order (outermost first) iterates a dimension
// t is broadcast along outside one t varies along.
bool broadcast_outside_varying(const TensorExpr& t, const std::vector<int64_t>& out_shape,
                               const std::vector<int64_t>& storage) {
  size_t rank = out_shape.size(), lead = rank - size_t(t.rank());
  bool broadcast_seen = false;
  for (size_t k = 0; k < rank; ++k) {
    size_t d = storage.empty() ? k : size_t(storage[k]);
    if (d < lead) {
      broadcast_seen = broadcast_seen || out_shape[d] > 1;
      continue;
    }
    int64_t extent = t.shape[d - lead];
    if (extent == 1 && out_shape[d] > 1) broadcast_seen = true;
    if (extent > 1 && broadcast_seen) return true;
  }
  return false;
}

}  // namespace

TensorExpr broadcast_once(LowerContext& ctx, const graph::Node& node, const TensorExpr& t,
                          const std::vector<int64_t>& out_shape) {
  if (t.buffer.defined() || t.rank() > int(out_shape.size()) || node.outputs.empty()) return t;
  if (!broadcast_outside_varying(t, out_shape, node.outputs[0]->storage) || !calls_intrinsic(t)) return t;
  return materialize(ctx, node, t);
}

void add_injective(LoweringRegistry& r, const std::string& op, LowerFn fn) {
  r.add(op, [fn](LowerContext& ctx, const graph::Node& node, const std::vector<TensorExpr>& inputs) {
    std::vector<TensorExpr> outs = fn(ctx, node, inputs);
    for (TensorExpr& t : outs) {
      if (t.buffer.defined()) continue;
      inherit_flat_iteration(node, inputs, t);
      if (expr_size(t) > kMaxInlineNodes) t = materialize(ctx, node, t);
    }
    return outs;
  });
}

void add_unary(LoweringRegistry& r, const std::string& op, int uses, ScalarFn fn) {
  add_injective(r, op,
                [uses, fn](LowerContext& ctx, const graph::Node& node, const std::vector<TensorExpr>& in) {
                  TensorExpr x = share(ctx, node, in[0], uses);
                  DType out = output_dtype(node);
                  graph::Attrs attrs = node.attrs;  // the closure may outlive the node
                  return std::vector<TensorExpr>{index_map(node, 0, [x, out, fn, attrs](const Index& idx) {
                    Expr v = x.at(idx);
                    return cast(out, fn(cast(compute_dtype(v->dtype), v), compute_dtype(v->dtype), attrs));
                  })};
                });
}

std::vector<int64_t> output_shape(const graph::Node& node, size_t i) {
  return static_shape(node.outputs.at(i)->type, node.span());
}

DType output_dtype(const graph::Node& node, size_t i) {
  return node.outputs.at(i)->type.dtype;
}

TensorExpr index_map(const graph::Node& node, size_t i, IndexFn value) {
  TensorExpr t;
  t.shape = output_shape(node, i);
  t.dtype = output_dtype(node, i);
  t.at = std::move(value);
  return t;
}

// A broadcast dimension (input extent 1, output extent > 1) reads index 0;
// every other dimension reads the output's index, so that an elementwise op
// reads its operands at exactly its own iteration variables (what
// reverse_compute_at and reverse_compute_inline recognise).
Index broadcast_index(const std::vector<int64_t>& in_shape, const Index& out,
                      const std::vector<int64_t>& out_shape) {
  TESSEL_ICHECK(in_shape.size() <= out.size() && out.size() == out_shape.size())
      << "broadcast of rank " << in_shape.size() << " to " << out.size();
  size_t lead = out.size() - in_shape.size();
  Index idx;
  for (size_t d = 0; d < in_shape.size(); ++d)
    idx.push_back(in_shape[d] == 1 && out_shape[lead + d] != 1 ? int_imm(0) : out[lead + d]);
  return idx;
}

Expr at_broadcast(const TensorExpr& in, const Index& out, const std::vector<int64_t>& out_shape) {
  return in.at(broadcast_index(in.shape, out, out_shape));
}

std::optional<std::vector<int64_t>> optional_constant_ints(const graph::Node& node, size_t i,
                                                           const char* what) {
  if (!node.has_input(i)) return std::nullopt;
  const graph::Value* v = node.inputs[i];
  TESSEL_USER_CHECK(v->is_constant(), node.span())
      << "'" << what << "' (input " << i << ") must be a constant to lower " << node.op << " to tensor IR";
  return v->constant->to_i64_vector();
}

std::vector<int64_t> constant_ints(const graph::Node& node, size_t i, const char* what) {
  auto v = optional_constant_ints(node, i, what);
  TESSEL_ICHECK(v.has_value()) << node.op << " lowered without input " << i;
  return *v;
}

bool has_input(const graph::Node& node, const std::vector<TensorExpr>& inputs, size_t i) {
  if (i < inputs.size() && inputs[i].at) return true;
  return node.has_input(i) && node.inputs[i]->is_constant();
}

Expr scalar_input(const graph::Node& node, const std::vector<TensorExpr>& inputs, size_t i) {
  if (i < inputs.size() && inputs[i].at) return inputs[i].at(Index(size_t(inputs[i].rank()), int_imm(0)));
  TESSEL_ICHECK(node.has_input(i) && node.inputs[i]->is_constant()) << node.op << ": no input " << i;
  return tensor_element(*node.inputs[i]->constant, 0);
}

Expr tensor_element(const Tensor& t, int64_t flat) {
  if (is_float(t.dtype())) return float_imm(t.get_f64(flat), t.dtype());
  if (t.dtype() == DType::kBool) return bool_imm(t.get_i64(flat) != 0);
  return int_imm(t.get_i64(flat), t.dtype());
}

Expr constant_at(const Tensor& t, const Index& idx) {
  TESSEL_ICHECK(t.numel() > 0) << "element of an empty constant";
  Expr flat = linearize(idx, t.shape());
  Expr e = tensor_element(t, t.numel() - 1);
  for (int64_t k = t.numel() - 1; k-- > 0;) e = select(eq(flat, int_imm(k)), tensor_element(t, k), e);
  return e;
}

Expr clamp_index(Expr e, int64_t lo, int64_t hi) {
  if (lo == hi) return int_imm(lo);
  return min(max(std::move(e), int_imm(lo)), int_imm(hi));
}

Expr wrap_negative(Expr e, int64_t extent) {
  Expr i = cast(kIndexType, std::move(e));
  return select(lt(i, int_imm(0)), i + extent, i);
}

Expr linearize(const Index& idx, const std::vector<int64_t>& shape) {
  TESSEL_ICHECK(idx.size() == shape.size())
      << "linearize of " << idx.size() << " indices, rank " << shape.size();
  Expr flat;
  int64_t stride = 1;
  for (size_t d = shape.size(); d-- > 0;) {
    if (shape[d] != 1) {
      Expr term = stride == 1 ? idx[d] : idx[d] * stride;
      flat = flat.defined() ? term + flat : term;
    }
    stride *= shape[d];
  }
  return flat.defined() ? flat : int_imm(0);
}

Index delinearize(Expr flat, const std::vector<int64_t>& shape) {
  Index idx(shape.size());
  int64_t stride = 1;
  for (size_t d = shape.size(); d-- > 0;) {
    if (shape[d] == 1) {
      idx[d] = int_imm(0);
      continue;
    }
    Expr q = stride == 1 ? flat : floordiv(flat, stride);
    // The outermost non-unit dimension needs no modulo: the index is in range.
    bool outermost = std::all_of(shape.begin(), shape.begin() + long(d), [](int64_t s) { return s == 1; });
    idx[d] = outermost ? q : floormod(q, shape[d]);
    stride *= shape[d];
  }
  return idx;
}

DType compute_dtype(DType t) {
  return t == DType::kF16 || t == DType::kBF16 ? DType::kF32 : t;
}

Expr in_compute_type(DType result, const std::vector<Expr>& args,
                     const std::function<Expr(const std::vector<Expr>&)>& fn) {
  std::vector<Expr> converted;
  for (const Expr& a : args) converted.push_back(cast(compute_dtype(a->dtype), a));
  return cast(result, fn(converted));
}

Expr fconst(DType t, double v) {
  return float_imm(v, t);
}

Expr std_min(Expr a, Expr b) {
  Expr cond = lt(b, a);
  return select(cond, std::move(b), std::move(a));
}

Expr std_max(Expr a, Expr b) {
  Expr cond = lt(a, b);
  return select(cond, std::move(b), std::move(a));
}

Expr float_to_int(const Expr& value, DType to) {
  constexpr double kLimit = 9223372036854775808.0;  // 2^63
  Expr v = cast(compute_dtype(value->dtype), value);
  DType t = v->dtype;
  // A value clamped into int32's range converts through int32 (one vector
  // instruction where int64 takes several): the same result, as truncation
  // then wrapping to `to` agree there; a NaN gives what INT64_MIN wraps to
  // in 32 bits or fewer, 0.
  tir::FloatBounds bounds = tir::float_bounds(v);
  bool narrow = is_integer(to) && !is_small(to) && dtype_size(to) <= 4;
  if (narrow && bounds.lo >= -2147483648.0 && bounds.hi < 2147483648.0) {
    Expr ordered = eq(v, v);
    Expr i = select(ordered, cast(DType::kI32, select(ordered, v, fconst(t, 0.0))), int_imm(0, DType::kI32));
    return cast(to, i);
  }
  // Every f32 in [-2^63, 2^63) is an f64 there too, so the bounds are exact.
  Expr in_range = ge(v, fconst(t, -kLimit)) && lt(v, fconst(t, kLimit));
  Expr safe = select(in_range, v, fconst(t, 0.0));
  Expr i = select(in_range, cast(DType::kI64, safe), int_imm(INT64_MIN, DType::kI64));
  return cast(to, i);
}

int normalized_axis(const graph::Node& node, int64_t axis, int rank) {
  return graph::ops::normalize_axis(axis, rank, node.span());
}

}  // namespace tessel::lower
