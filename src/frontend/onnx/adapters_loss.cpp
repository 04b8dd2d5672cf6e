// The loss ops, NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss, become
// the graph ops ONNX defines them by: the target's class picked out of the
// input with GatherElements (which checks every index at run time), weighted
// per class with Gather, the ignored positions zeroed with Where, then summed
// or averaged. The fusion pass groups what is left into few kernels; a
// dedicated op would gain nothing over that but a second copy of the rules.
#include "src/frontend/onnx/adapters.h"

namespace tessel::onnx_frontend {

namespace {

struct LossForm {
  std::string reduction;  // none, sum or mean
  std::optional<int64_t> ignore_index;
};

LossForm loss_form(const AdaptContext& c) {
  LossForm f{c.string_attr("reduction", "mean"), std::nullopt};
  TESSEL_USER_CHECK(f.reduction == "none" || f.reduction == "sum" || f.reduction == "mean", c.span())
      << "attribute 'reduction' must be \"none\", \"sum\" or \"mean\", got \"" << f.reduction << "\"";
  if (c.attrs.find("ignore_index")) f.ignore_index = c.int_attr("ignore_index", 0);
  return f;
}

graph::Value* int_constant(AdaptContext& c, DType dtype, std::vector<int64_t> values, Dims shape) {
  Tensor t(dtype, std::move(shape));
  for (size_t i = 0; i < values.size(); ++i) t.set_i64(int64_t(i), values[i]);
  return c.constant(std::move(t));
}

graph::Attrs keepdims(int64_t keep) {
  graph::Attrs a;
  a.set("keepdims", keep);
  return a;
}

// The checks ONNX's schema leaves to the function body: the ranks and
// types the gather below relies on.
void check_loss_inputs(const AdaptContext& c, graph::Value* input, graph::Value* target,
                       graph::Value* weight) {
  TESSEL_USER_CHECK(input && target, c.span()) << "the input and the target are required";
  TESSEL_USER_CHECK(is_float(input->type.dtype), c.span())
      << "the input must be a floating-point tensor, got " << input->type.str();
  TESSEL_USER_CHECK(target->type.dtype == DType::kI32 || target->type.dtype == DType::kI64, c.span())
      << "the target must be int32 or int64, got " << target->type.str();
  bool ranks_known = input->type.rank_known && target->type.rank_known;
  TESSEL_USER_CHECK(
      !ranks_known || (input->type.rank() >= 2 && target->type.rank() == input->type.rank() - 1), c.span())
      << "the input must be [N, C, d1, ...] and the target [N, d1, ...], got " << input->type.str() << " and "
      << target->type.str();
  TESSEL_USER_CHECK(!weight || (weight->type.dtype == input->type.dtype &&
                                (!weight->type.rank_known || weight->type.rank() == 1)),
                    c.span())
      << "the weight must be a [C] tensor of the input's type, got " << weight->type.str();
}

// loss[n, d...] = -input[n, target[n, d...], d...] * weight[target[n, d...]],
// zero where the target is ignore_index; then the reduction.
graph::Value* nll_loss(AdaptContext& c, graph::Value* input, graph::Value* target, graph::Value* weight) {
  check_loss_inputs(c, input, target, weight);
  LossForm form = loss_form(c);
  DType ty = input->type.dtype, index_ty = target->type.dtype;
  graph::Value* ignored = nullptr;
  graph::Value* index = target;
  if (form.ignore_index) {
    ignored = c.emit("Equal", {target, int_constant(c, index_ty, {*form.ignore_index}, {})})[0];
    index = c.emit("Where", {ignored, int_constant(c, index_ty, {0}, {}), target})[0];
  }
  // GatherElements would count a negative class from the end; ONNX's classes
  // are [0, C), so a negative one is moved below -C, where it is refused.
  graph::Value* classes =
      c.emit("Gather", {c.emit("Shape", {input})[0], int_constant(c, DType::kI64, {1}, {})})[0];
  classes = c.cast(classes, index_ty);
  graph::Value* negative = c.emit("Less", {index, int_constant(c, index_ty, {0}, {})})[0];
  index = c.emit("Where", {negative, c.emit("Sub", {index, classes})[0], index})[0];
  graph::Value* axis1 = int_constant(c, DType::kI64, {1}, {1});
  graph::Value* picked_index = c.emit("Unsqueeze", {index, axis1})[0];
  graph::Attrs along_classes;
  along_classes.set("axis", int64_t(1));
  graph::Value* picked = c.emit("GatherElements", {input, picked_index}, along_classes)[0];
  graph::Value* loss = c.emit("Neg", {c.emit("Squeeze", {picked, axis1})[0]})[0];
  graph::Value* zero = c.constant(Tensor::scalar_f64(ty, 0.0));
  graph::Value* per_position = nullptr;  // the weight of each position, where there is one
  if (weight) per_position = c.emit("Gather", {weight, index})[0];
  if (ignored)
    per_position = c.emit(
        "Where", {ignored, zero, per_position ? per_position : c.constant(Tensor::scalar_f64(ty, 1.0))})[0];
  if (per_position) loss = c.emit("Mul", {loss, per_position})[0];
  if (form.reduction == "none") return loss;
  graph::Value* total = c.emit("ReduceSum", {loss}, keepdims(0))[0];
  if (form.reduction == "sum") return total;
  if (per_position) return c.emit("Div", {total, c.emit("ReduceSum", {per_position}, keepdims(0))[0]})[0];
  return c.emit("ReduceMean", {loss}, keepdims(0))[0];
}

void adapt_nll_loss(AdaptContext& c) {
  c.results =
      std::vector<graph::Value*>{nll_loss(c, c.input_or_null(0), c.input_or_null(1), c.input_or_null(2))};
}

// The loss of LogSoftmax over the classes; the log-probabilities are the
// optional second output.
void adapt_softmax_cross_entropy(AdaptContext& c) {
  graph::Value* scores = c.input_or_null(0);
  TESSEL_USER_CHECK(scores != nullptr, c.span()) << "the scores are required";
  graph::Attrs classes;
  classes.set("axis", int64_t(1));
  graph::Value* log_prob = c.emit("LogSoftmax", {scores}, classes)[0];
  graph::Value* loss = nll_loss(c, log_prob, c.input_or_null(1), c.input_or_null(2));
  c.results = std::vector<graph::Value*>{loss};
  if (c.output_names.size() > 1) c.results->push_back(log_prob);
}

}  // namespace

void register_loss_adapters(AdapterTable& t) {
  t["NegativeLogLikelihoodLoss"] = adapt_nll_loss;
  t["SoftmaxCrossEntropyLoss"] = adapt_softmax_cross_entropy;
}

}  // namespace tessel::onnx_frontend
