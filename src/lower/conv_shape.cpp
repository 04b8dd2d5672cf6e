#include "src/lower/conv_shape.h"

#include <string>
#include <vector>

#include "ir/graph/ops/window_geometry.h"

namespace tessel::lower {

namespace {

std::vector<int64_t> spatial_of(const Dims& shape) {
  return {shape.begin() + 2, shape.end()};
}

}  // namespace

bool has_channels_last_weight(const graph::Node& conv) {
  auto produced_by = [](const graph::Value* v, const std::string& op) -> const graph::Node* {
    const graph::Node* n = v->producer;
    return n && n->op == op && n->has_input(0) ? n : nullptr;
  };
  auto has_perm = [](const graph::Node* n, const auto& perm) {
    return n->attrs.has("perm") && n->attrs.get_ints("perm") == std::vector<int64_t>(perm.begin(), perm.end());
  };
  if (!conv.has_input(1)) return false;
  const graph::Node* unpack = produced_by(conv.inputs[1], "Transpose");
  if (!unpack || !has_perm(unpack, passes::kUnpackChannelsLast)) return false;
  const graph::Value* view = unpack->inputs[0];
  if (view->is_constant()) return true;
  const graph::Node* reshape = produced_by(view, "Reshape");
  const graph::Node* panels = reshape ? produced_by(reshape->inputs[0], "Transpose") : nullptr;
  return panels && has_perm(panels, passes::kPanelsToChannelsLast) && panels->inputs[0]->is_constant();
}

ConvShape conv_shape_of(const graph::Node& conv, bool assume_packed) {
  Dims x = conv.inputs[0]->type.static_dims(), w = conv.inputs[1]->type.static_dims();
  Dims out = conv.outputs[0]->type.static_dims();
  std::vector<int64_t> kernel = graph::ops::conv_kernel_shape(conv.attrs, spatial_of(w), conv.span());
  graph::ops::WindowGeometry g =
      graph::ops::window_geometry(conv.attrs, spatial_of(x), kernel, false, conv.span());
  int64_t group = conv.attrs.get_int("group");
  ConvShape shape{{out.begin(), out.end()},
                  kernel,
                  g.strides,
                  g.dilations,
                  g.pad_begin,
                  g.pad_end,
                  group,
                  w[1],
                  out[1] / group};
  shape.weight_channels_last = assume_packed || has_channels_last_weight(conv);
  shape.input_channels_last = passes::stored_channels_last(*conv.inputs[0]);
  shape.output_channels_last = passes::stored_channels_last(*conv.outputs[0]);
  return shape;
}

}  // namespace tessel::lower
