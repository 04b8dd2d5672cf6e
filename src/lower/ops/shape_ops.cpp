// Compute definitions of the shape ops. Reshape, Flatten, Squeeze and
// Unsqueeze are one index map: the row-major reinterpretation of the input,
// computed per group of dimensions so that inserting or removing unit
// dimensions and merging or splitting neighbours stay cheap affine maps.
// Expand broadcasts; Shape, Size and ConstantOfShape are known constants.
#include "ir/graph/ops/shape_ops.h"
#include "src/lower/ops/elem_lowerings.h"

namespace tessel::lower {

using namespace tir;

namespace {

// Runs of non-unit dimensions with equal element counts: in[in_begin,
// in_end) holds the same elements as out[out_begin, out_end), row-major.
struct DimGroup {
  std::vector<size_t> in, out;
};

std::vector<DimGroup> reshape_groups(const std::vector<int64_t>& in, const std::vector<int64_t>& out) {
  std::vector<size_t> ins, outs;
  for (size_t d = 0; d < in.size(); ++d)
    if (in[d] != 1) ins.push_back(d);
  for (size_t d = 0; d < out.size(); ++d)
    if (out[d] != 1) outs.push_back(d);
  std::vector<DimGroup> groups;
  size_t i = 0, j = 0;
  while (i < ins.size() && j < outs.size()) {
    DimGroup g;
    int64_t pin = in[ins[i]], pout = out[outs[j]];
    g.in.push_back(ins[i++]);
    g.out.push_back(outs[j++]);
    while (pin != pout) {
      TESSEL_ICHECK(pin < pout ? i < ins.size() : j < outs.size())
          << "reshape of " << dims_str(in) << " to " << dims_str(out);
      if (pin < pout) {
        pin *= in[ins[i]];
        g.in.push_back(ins[i++]);
      } else {
        pout *= out[outs[j]];
        g.out.push_back(outs[j++]);
      }
    }
    groups.push_back(std::move(g));
  }
  TESSEL_ICHECK(i == ins.size() && j == outs.size())
      << "reshape of " << dims_str(in) << " to " << dims_str(out);
  return groups;
}

std::vector<int64_t> extents_of(const std::vector<size_t>& dims, const std::vector<int64_t>& shape) {
  std::vector<int64_t> e;
  for (size_t d : dims) e.push_back(shape[d]);
  return e;
}

// x read as a tensor of shape `shape` (same element count, row-major).
TensorExpr reshaped(const TensorExpr& x, const graph::Node& node) {
  std::vector<int64_t> out = output_shape(node);
  if (num_elements(out) == 0) {
    DType dtype = x.dtype;
    return index_map(node, 0, [dtype](const Index&) { return const_of(dtype, 0); });
  }
  std::vector<DimGroup> groups = reshape_groups(x.shape, out);
  std::vector<int64_t> in_shape = x.shape;
  return index_map(node, 0, [x, groups, in_shape, out](const Index& idx) {
    Index src(in_shape.size(), int_imm(0));
    for (const DimGroup& g : groups) {
      if (g.in.size() == 1 && g.out.size() == 1) {
        src[g.in[0]] = idx[g.out[0]];
        continue;
      }
      Index outer;
      for (size_t d : g.out) outer.push_back(idx[d]);
      Index inner = delinearize(linearize(outer, extents_of(g.out, out)), extents_of(g.in, in_shape));
      for (size_t k = 0; k < g.in.size(); ++k) src[g.in[k]] = inner[k];
    }
    return x.at(src);
  });
}

std::vector<TensorExpr> lower_reshape(LowerContext&, const graph::Node& node,
                                      const std::vector<TensorExpr>& in) {
  return {reshaped(in[0], node)};
}

std::vector<TensorExpr> lower_expand(LowerContext&, const graph::Node& node,
                                     const std::vector<TensorExpr>& in) {
  TensorExpr x = in[0];
  std::vector<int64_t> shape = static_shape(node.outputs[0]->type, node.span());
  return {index_map(node, 0, [x, shape](const Index& idx) { return at_broadcast(x, idx, shape); })};
}

// The dimensions [start, end) of the input's static shape.
std::vector<TensorExpr> lower_shape(LowerContext&, const graph::Node& node,
                                    const std::vector<TensorExpr>& in) {
  const std::vector<int64_t>& s = in[0].shape;
  auto [first, last] =
      graph::ops::shape_range(int(s.size()), node.attrs.get_int("start"), node.attrs.get_int("end"));
  Tensor dims = Tensor::from_i64(std::vector<int64_t>(s.begin() + first, s.begin() + last));
  if (dims.numel() == 0) return {index_map(node, 0, [](const Index&) { return int_imm(0); })};
  return {index_map(node, 0, [dims](const Index& idx) { return constant_at(dims, idx); })};
}

std::vector<TensorExpr> lower_size(LowerContext&, const graph::Node& node,
                                   const std::vector<TensorExpr>& in) {
  int64_t n = num_elements(in[0].shape);
  return {index_map(node, 0, [n](const Index&) { return int_imm(n); })};
}

std::vector<TensorExpr> lower_constant_of_shape(LowerContext&, const graph::Node& node,
                                                const std::vector<TensorExpr>&) {
  Expr value = tensor_element(node.attrs.get_tensor("value"), 0);
  return {index_map(node, 0, [value](const Index&) { return value; })};
}

}  // namespace

void register_shape_lowerings(LoweringRegistry& r) {
  for (const char* op : {"Reshape", "Flatten", "Squeeze", "Unsqueeze"}) add_injective(r, op, lower_reshape);
  add_injective(r, "Expand", lower_expand);
  add_injective(r, "Shape", lower_shape);
  add_injective(r, "Size", lower_size);
  add_injective(r, "ConstantOfShape", lower_constant_of_shape);
}

}  // namespace tessel::lower
