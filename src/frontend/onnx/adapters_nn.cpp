// Opset adapters of the nn ops: Softmax/LogSoftmax before opset 13 (coerce to
// 2-D), BatchNormalization's `spatial` (opset 7) and training mode (the
// batch's statistics, the running ones updated), GroupNormalization-18's
// per-group scale and bias.
#include "src/frontend/onnx/adapters.h"

#include "ir/graph/op_registry.h"

namespace tessel::onnx_frontend {

namespace {

graph::Attrs axis_attrs(int64_t axis) {
  graph::Attrs a;
  a.set("axis", axis);
  return a;
}

// Softmax-1/11: the input is flattened to 2-D at `axis` (default 1) and the
// softmax runs over the whole second dimension. Canonical form: Flatten,
// Softmax(axis=-1), Reshape back to the input's shape; when axis is the last
// dimension that is just Softmax(axis=-1).
void adapt_softmax(AdaptContext& c) {
  if (c.opset >= 13) return;
  const graph::AttrValue* v = c.attrs.find("axis");
  int64_t axis = v ? std::get<int64_t>(*v) : 1;
  graph::Value* x = c.required_input(0, "input");
  const graph::TensorType& t = x->type;
  if (t.rank_known) {
    TESSEL_USER_CHECK(axis >= -t.rank() && axis < std::max(t.rank(), 1), c.span())
        << "axis " << axis << " is out of range for rank " << t.rank();
    if (axis < 0) axis += t.rank();
    if (axis == t.rank() - 1) {
      c.attrs.set("axis", int64_t(-1));
      return;
    }
  }
  graph::Value* flat = c.emit("Flatten", {x}, axis_attrs(axis))[0];
  graph::Value* soft = c.emit(c.op, {flat}, axis_attrs(-1))[0];
  graph::Value* shape = c.emit("Shape", {x})[0];
  c.results = c.emit("Reshape", {soft, shape});
}

// Opset 7's spatial=0 normalises per activation: scale, B, mean and var are
// [C, D1, ...]. That is elementwise arithmetic broadcasting against X, so it
// becomes (X - mean) * (scale / sqrt(var + epsilon)) + B.
void adapt_batch_norm_per_activation(AdaptContext& c) {
  const graph::AttrValue* e = c.attrs.find("epsilon");
  double eps = e ? std::get<double>(*e) : 1e-5;
  graph::Value* x = c.required_input(0, "X");
  graph::Value* var = c.required_input(4, "var");
  graph::Value* eps_v = c.constant(Tensor::scalar_f64(var->type.dtype, eps));
  graph::Value* std_v = c.emit("Sqrt", {c.emit("Add", {var, eps_v})[0]})[0];
  graph::Value* gain = c.emit("Div", {c.required_input(1, "scale"), std_v})[0];
  graph::Value* centred = c.emit("Sub", {x, c.required_input(3, "mean")})[0];
  graph::Value* y = c.emit("Add", {c.emit("Mul", {centred, gain})[0], c.required_input(2, "B")})[0];
  c.results = std::vector<graph::Value*>(c.output_names.size(), nullptr);
  (*c.results)[0] = y;
}

// [C] laid along axis 1 of a rank-`rank` tensor.
graph::Value* along_channels(AdaptContext& c, graph::Value* v, int64_t rank) {
  std::vector<int64_t> shape(size_t(rank), 1);
  shape[1] = -1;
  return c.emit("Reshape", {v, c.i64_vector(shape)})[0];
}

// training_mode=1 (opset 14 on): Y normalised by the batch's own mean and
// (population) variance over every axis but the channels', and the running
// statistics moved towards them: input * momentum + batch * (1 - momentum).
void adapt_batch_norm_training(AdaptContext& c) {
  graph::Value* x = c.required_input(0, "X");
  TESSEL_USER_CHECK(x->type.rank_known && x->type.rank() >= 2, c.span())
      << "training mode needs an input of known rank, N x C x ...";
  int64_t rank = x->type.rank();
  std::vector<int64_t> axes{0};
  for (int64_t a = 2; a < rank; ++a) axes.push_back(a);
  DType t = x->type.dtype;
  graph::Attrs drop_axes = one_attr("keepdims", int64_t(0));
  graph::Value* mean = c.emit("ReduceMean", {x, c.i64_vector(axes)}, drop_axes)[0];
  graph::Value* centred = c.emit("Sub", {x, along_channels(c, mean, rank)})[0];
  graph::Value* var =
      c.emit("ReduceMean", {c.emit("Mul", {centred, centred})[0], c.i64_vector(axes)}, drop_axes)[0];
  const graph::AttrValue* e = c.attrs.find("epsilon");
  graph::Value* eps = c.scalar(t, e ? std::get<double>(*e) : 1e-5);
  graph::Value* inv_std = c.emit("Reciprocal", {c.emit("Sqrt", {c.emit("Add", {var, eps})[0]})[0]})[0];
  graph::Value* gain = c.emit("Mul", {c.cast(c.required_input(1, "scale"), t), inv_std})[0];
  graph::Value* y = c.emit("Add", {c.emit("Mul", {centred, along_channels(c, gain, rank)})[0],
                                   along_channels(c, c.cast(c.required_input(2, "B"), t), rank)})[0];
  const graph::AttrValue* m = c.attrs.find("momentum");
  double momentum = m ? std::get<double>(*m) : 0.9;
  auto running = [&](size_t input, graph::Value* batch) {
    graph::Value* old = c.required_input(input, input == 3 ? "input_mean" : "input_var");
    graph::Value* kept = c.emit("Mul", {old, c.scalar(old->type.dtype, momentum)})[0];
    graph::Value* moved =
        c.emit("Mul", {c.cast(batch, old->type.dtype), c.scalar(old->type.dtype, 1 - momentum)})[0];
    return c.emit("Add", {kept, moved})[0];
  };
  c.results = std::vector<graph::Value*>{y, running(3, mean), running(4, var)};
  c.results->resize(c.output_names.size());
}

// Inference form (training_mode 0): outputs beyond Y (opset 9's saved
// statistics) must be absent or unnamed.
void adapt_batch_norm(AdaptContext& c) {
  const graph::AttrValue* training = c.attrs.find("training_mode");
  if (training && std::get<int64_t>(*training) != 0) return adapt_batch_norm_training(c);
  for (size_t i = 1; i < c.output_names.size(); ++i)
    TESSEL_USER_CHECK(c.output_names[i].empty(), c.span())
        << "output " << i << " ('" << c.output_names[i] << "') holds training statistics; only the "
        << "inference form of BatchNormalization (one output) is supported";
  const graph::AttrValue* spatial = c.attrs.find("spatial");
  bool per_activation = spatial && std::get<int64_t>(*spatial) == 0;
  c.attrs.erase("spatial");
  c.attrs.erase("is_test");  // opset < 7; harmless to drop
  if (per_activation) return adapt_batch_norm_per_activation(c);
  if (c.output_names.size() <= 1) return;
  graph::Node* n = c.graph.add_node(c.op, c.name, c.inputs, {c.output_names[0]}, c.attrs);
  infer_and_fold(*n, c.fold_constants);
  c.results = std::vector<graph::Value*>(c.output_names.size(), nullptr);
  (*c.results)[0] = n->outputs[0];
}

// Repeats each of the G values of a constant [G] tensor C / G times.
Tensor per_channel(const Tensor& per_group, int64_t channels, const Span& span) {
  int64_t groups = per_group.numel();
  TESSEL_USER_CHECK(per_group.rank() == 1 && groups > 0 && channels % groups == 0, span)
      << "scale and bias must be [num_groups] with num_groups dividing the " << channels << " channels, got "
      << per_group.type_str();
  Tensor out(per_group.dtype(), {channels});
  for (int64_t ch = 0; ch < channels; ++ch) out.set_f64(ch, per_group.get_f64(ch / (channels / groups)));
  return out;
}

// GroupNormalization-18 takes scale and bias per group; 21 per channel.
void adapt_group_norm(AdaptContext& c) {
  if (c.opset >= 21) return;
  graph::Value* x = c.required_input(0, "X");
  bool known_c = x && x->type.rank_known && x->type.rank() >= 2 && x->type.dims[1].is_known();
  for (size_t i = 1; i <= 2; ++i) {
    graph::Value* v = i < c.inputs.size() ? c.inputs[i] : nullptr;
    TESSEL_USER_CHECK(v && v->is_constant() && known_c, c.span())
        << "GroupNormalization-18 is supported with constant scale and bias and a known channel count only";
    c.set_input(i, c.constant(per_channel(*v->constant, x->type.dims[1].value, c.span())));
  }
}

}  // namespace

void register_nn_adapters(AdapterTable& t) {
  t["Softmax"] = adapt_softmax;
  t["LogSoftmax"] = adapt_softmax;
  t["BatchNormalization"] = adapt_batch_norm;
  t["GroupNormalization"] = adapt_group_norm;
}

}  // namespace tessel::onnx_frontend
