// Shared pieces of the shape functions.
#include "ir/graph/ops/shape_helpers.h"

#include <algorithm>

namespace tessel::graph::ops {

int normalize_axis(int64_t axis, int rank, const Span& span) {
  TESSEL_USER_CHECK(axis >= -rank && axis < std::max(rank, 1), span)
      << "axis " << axis << " is out of range for rank " << rank;
  return int(axis < 0 ? axis + rank : axis);
}

std::vector<int> normalize_axes(const std::vector<int64_t>& axes, int rank, const Span& span) {
  std::vector<int> out;
  for (int64_t a : axes) {
    int n = normalize_axis(a, rank, span);
    TESSEL_USER_CHECK(std::find(out.begin(), out.end(), n) == out.end(), span)
        << "axis " << a << " appears twice";
    out.push_back(n);
  }
  return out;
}

std::vector<Dim> broadcast_dims(const std::vector<const TensorType*>& types, const Span& span) {
  int rank = 0;
  for (const TensorType* t : types) rank = std::max(rank, t->rank());
  std::vector<Dim> out(size_t(rank), Dim::known(1));
  for (const TensorType* t : types) {
    int offset = rank - t->rank();
    for (int i = 0; i < t->rank(); ++i) {
      const Dim& d = t->dims[size_t(i)];
      Dim& o = out[size_t(offset + i)];
      if (d.is_known() && d.value == 1) continue;
      if (o.is_known() && o.value == 1) {
        o = d;
        continue;
      }
      if (d.is_known() && o.is_known()) {
        TESSEL_USER_CHECK(d.value == o.value, span)
            << "shapes cannot be broadcast: dimension " << o.value << " vs " << d.value;
        continue;
      }
      if (d.is_known()) o = d;  // the unknown side must be d or 1 at run time
      else if (!o.is_known() && !(o == d)) o = Dim::unknown();
    }
  }
  return out;
}

void check_same_dtype(const InferContext& ctx, const std::vector<size_t>& inputs) {
  DType t = ctx.input(inputs.front()).dtype;
  for (size_t i : inputs) {
    if (!ctx.has_input(i)) continue;
    TESSEL_USER_CHECK(ctx.input(i).dtype == t, ctx.span())
        << "input " << i << " has dtype " << dtype_name(ctx.input(i).dtype) << ", expected "
        << dtype_name(t);
  }
}

int64_t output_elements(const Node& node) {
  auto n = node.outputs.at(0)->type.numel();
  return n ? *n : 0;
}

}  // namespace tessel::graph::ops
