// Index and dtype helpers shared by the nn lowerings: sliding-window positions,
// in-bounds guards of padded reads, numpy broadcasting, accumulation dtypes.
#include "ir/core/diagnostics.h"
#include "src/lower/ops/nn_lowerings.h"

namespace tessel::lower::nn {

using namespace tir;

void GuardedRead::check(const Expr& index, int64_t lowest, int64_t highest, int64_t extent) {
  if (lowest < 0) require(index >= int_imm(0));
  if (highest >= extent) require(index < int_imm(extent));
}

void GuardedRead::require(const Expr& cond) {
  cond_ = cond_.defined() ? logical_and(cond_, cond) : cond;
}

// Each index is also clamped into the tensor: where the guard holds the clamp
// changes nothing, and elsewhere the read stays in bounds, so a backend may
// evaluate it unconditionally (a select instead of a branch, vectorizable).
Expr GuardedRead::read(const TensorExpr& x, const std::vector<Expr>& indices, const Expr& otherwise) const {
  if (!cond_.defined()) return x.at(indices);
  std::vector<Expr> clamped;
  for (size_t d = 0; d < indices.size(); ++d)
    clamped.push_back(max(min(indices[d], int_imm(x.shape[d] - 1)), int_imm(0)));
  return guard(x.at(clamped), otherwise);
}

Expr GuardedRead::guard(const Expr& value, const Expr& otherwise) const {
  return cond_.defined() ? select(cond_, value, otherwise) : value;
}

DType accum_dtype(DType t) {
  return t == DType::kF16 || t == DType::kBF16 ? DType::kF32 : t;
}

TensorExpr cast_expr(const TensorExpr& t, DType dtype) {
  if (t.dtype == dtype) return t;
  TensorExpr out;
  out.shape = t.shape;
  out.dtype = dtype;
  out.at = [t, dtype](const std::vector<Expr>& idx) { return cast(dtype, t.at(idx)); };
  return out;
}

Expr window_index(const Expr& o, int64_t stride, int64_t pad, const Expr& k, int64_t dilation) {
  Expr i = stride == 1 ? o : o * stride;
  if (pad != 0) i = i - pad;
  return i + (dilation == 1 ? k : k * dilation);
}

std::vector<Expr> broadcast_indices(const std::vector<int64_t>& shape, const std::vector<Expr>& target,
                                    const std::vector<int64_t>& target_shape) {
  TESSEL_ICHECK(shape.size() <= target.size() &&
                (target_shape.empty() || target_shape.size() == target.size()))
      << "broadcast of rank " << shape.size() << " to " << target.size();
  size_t skip = target.size() - shape.size();
  std::vector<Expr> out;
  for (size_t i = 0; i < shape.size(); ++i) {
    bool broadcast = shape[i] == 1 && (target_shape.empty() || target_shape[skip + i] != 1);
    out.push_back(broadcast ? int_imm(0) : target[skip + i]);
  }
  return out;
}

}  // namespace tessel::lower::nn
