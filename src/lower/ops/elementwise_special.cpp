// Compute definitions of Where, Clip, Cast, Identity and inference-mode
// Dropout. Identity and Dropout return their input's TensorExpr unchanged, so
// they cost nothing once inlined.
#include "ir/core/diagnostics.h"
#include "src/lower/ops/elem_lowerings.h"

namespace tessel::lower {

using namespace tir;

namespace {

std::vector<TensorExpr> lower_where(LowerContext&, const graph::Node& node,
                                    const std::vector<TensorExpr>& in) {
  TensorExpr c = in[0], a = in[1], b = in[2];
  std::vector<int64_t> shape = static_shape(node.outputs[0]->type, node.span());
  return {index_map(node, 0, [c, a, b, shape](const Index& idx) {
    return select(at_broadcast(c, idx, shape), at_broadcast(a, idx, shape), at_broadcast(b, idx, shape));
  })};
}

// y = min(max(x, lo), hi), each bound optional, as the reference writes it:
// a NaN stays NaN, and lo > hi makes every element hi.
std::vector<TensorExpr> lower_clip(LowerContext& ctx, const graph::Node& node,
                                   const std::vector<TensorExpr>& in) {
  bool has_lo = has_input(node, in, 1), has_hi = has_input(node, in, 2);
  TensorExpr x = share(ctx, node, in[0], has_lo && has_hi ? 4 : 2);
  Expr lo = has_lo ? scalar_input(node, in, 1) : Expr{};
  Expr hi = has_hi ? scalar_input(node, in, 2) : Expr{};
  DType out = output_dtype(node);
  return {index_map(node, 0, [x, lo, hi, out](const Index& idx) {
    DType ct = compute_dtype(out);
    Expr v = cast(ct, x.at(idx));
    if (lo.defined()) v = select(lt(v, cast(ct, lo)), cast(ct, lo), v);
    if (hi.defined()) v = select(lt(cast(ct, hi), v), cast(ct, hi), v);
    return cast(out, v);
  })};
}

// Conversions as the reference's convert_value: to bool is != 0; float to
// integer truncates through int64; everything else converts through the
// target's compute dtype (so f64 -> f16 rounds via f32, as the reference does).
// To a storage-only type without saturation: the saturating cast, except
// where the magnitude rounds past the largest finite value (infinity
// included), which gives the format's NaN or infinity.
Expr unsaturated(const Expr& x, DType to) {
  small_types::Overflow o = small_types::overflow_of(small_format(to));
  if (o.never_overflows) return cast(to, x);
  Expr v = cast(DType::kF64, x), a = call(Intrinsic::k_fabs, {v});
  Expr bound = fconst(DType::kF64, o.threshold);
  Expr over = o.ties_overflow ? ge(a, bound) : gt(a, bound);
  Expr code =
      select(lt(v, fconst(DType::kF64, 0.0)), int_imm(o.negative_code, to), int_imm(o.positive_code, to));
  return select(over, code, cast(to, x));
}

Expr convert(const Expr& x, DType to, bool saturate = true) {
  DType from = x->dtype;
  if (from == to) return x;
  if (is_small(from) || is_small(to)) {
    if (to == DType::kBool) return ne(cast(DType::kF64, x), fconst(DType::kF64, 0.0));
    return is_small(to) && !saturate && !is_small(from) ? unsaturated(x, to) : cast(to, x);
  }
  if (to == DType::kBool) {
    DType ct = compute_dtype(from);
    return ne(cast(ct, x), const_of(ct, 0));
  }
  if (is_float(from) && is_integer(to)) return float_to_int(x, to);
  return cast(to, cast(compute_dtype(to), x));
}

std::vector<TensorExpr> lower_cast(LowerContext&, const graph::Node& node,
                                   const std::vector<TensorExpr>& in) {
  TensorExpr x = in[0];
  DType to = output_dtype(node);
  bool saturate = node.attrs.get_int("saturate") != 0;
  return {
      index_map(node, 0, [x, to, saturate](const Index& idx) { return convert(x.at(idx), to, saturate); })};
}

std::vector<TensorExpr> lower_bitcast(LowerContext&, const graph::Node& node,
                                      const std::vector<TensorExpr>& in) {
  TensorExpr x = in[0];
  DType to = output_dtype(node);
  return {index_map(node, 0, [x, to](const Index& idx) { return bitcast(to, x.at(idx)); })};
}

std::vector<TensorExpr> lower_identity(LowerContext&, const graph::Node&, const std::vector<TensorExpr>& in) {
  return {in[0]};
}

// Whether input i is a constant whose every element is zero.
bool constant_zero(const graph::Node& node, size_t i) {
  if (!node.has_input(i) || !node.inputs[i]->is_constant()) return false;
  const Tensor& t = *node.inputs[i]->constant;
  for (int64_t k = 0; k < t.numel(); ++k)
    if (t.get_f64(k) != 0) return false;
  return true;
}

// Inference mode, or training mode at ratio 0: the output is the input, the
// optional mask all true. Where a run decides training_mode or the ratio, a
// check stops a run that would train at another ratio (dropping at random).
std::vector<TensorExpr> lower_dropout(LowerContext& ctx, const graph::Node& node,
                                      const std::vector<TensorExpr>& in) {
  bool inference = !node.has_input(2) || constant_zero(node, 2);
  if (!inference && !constant_zero(node, 1)) {
    std::string message = node.span().str() +
                          ": training-mode Dropout with a ratio other than 0 drops at "
                          "random, which a compiled model does not";
    ctx.check(node.name + "_check", {}, [&](const Index&) {
      Expr ratio = node.has_input(1) ? cast(DType::kF64, in[1].at(Index(in[1].shape.size(), int_imm(0))))
                                     : float_imm(0.5, DType::kF64);
      Expr training = in[2].at(Index(in[2].shape.size(), int_imm(0)));
      return std::vector<LowerContext::Assertion>{
          {logical_or(logical_not(training), eq(ratio, float_imm(0, DType::kF64))), message, {}}};
    });
  }
  std::vector<TensorExpr> outs{in[0]};
  if (node.outputs.size() > 1 && node.outputs[1] != nullptr)
    outs.push_back(index_map(node, 1, [](const Index&) { return bool_imm(true); }));
  return outs;
}

}  // namespace

void register_elementwise_special_lowerings(LoweringRegistry& r) {
  add_injective(r, "Where", lower_where);
  add_injective(r, "Clip", lower_clip);
  add_injective(r, "Cast", lower_cast);
  add_injective(r, "Identity", lower_identity);
  add_injective(r, "BitCast", lower_bitcast);
  add_injective(r, "Dropout", lower_dropout);
}

}  // namespace tessel::lower
