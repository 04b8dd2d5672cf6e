// The optimizers of ai.onnx.preview.training (opset 1): one update step of
// Adagrad, Adam and Momentum, each elementwise arithmetic on its tensors as
// ONNX's definitions write it. Inputs: the learning rate R and the update count
// T (scalars), then each of the tensors' lists (X..., G..., then V... and/or
// H...), n tensors each; outputs: the new X... and the new states, in order.
#include "src/frontend/onnx/adapters.h"

namespace tessel::onnx_frontend {

namespace {

using graph::Value;

// The adapters' view of one optimizer node: the lists of its n tensors.
struct Update {
  AdaptContext& c;
  size_t n = 0;
  Value *rate = nullptr, *count = nullptr;

  Update(AdaptContext& context, size_t lists) : c(context) {
    size_t tensors = c.inputs.size() >= 2 ? c.inputs.size() - 2 : 0;
    TESSEL_USER_CHECK(
        tensors > 0 && tensors % lists == 0 && c.output_names.size() == tensors / lists * (lists - 1),
        c.span())
        << "expects R, T and " << lists << " lists of as many tensors as its " << lists - 1
        << " lists of outputs, got " << c.inputs.size() << " inputs and " << c.output_names.size()
        << " outputs";
    n = tensors / lists;
    for (size_t i = 0; i < c.inputs.size(); ++i)
      TESSEL_USER_CHECK(c.inputs[i] != nullptr, c.span()) << "input " << i << " is omitted";
    rate = c.emit("Reshape", {c.inputs[0], c.i64_vector({})})[0];
    count = c.emit("Reshape", {c.cast(c.inputs[1], DType::kI64), c.i64_vector({})})[0];
  }
  Value* in(size_t list, size_t k) const { return c.inputs[2 + list * n + k]; }
  Value* scalar(Value* like, double v) const { return c.scalar(like->type.dtype, v); }
  Value* op(const char* name, Value* a, Value* b) const { return c.emit(name, {a, b})[0]; }
  Value* attr(Value* like, const char* name, double fallback) const {
    return scalar(like, c.float_attr(name, fallback));
  }
  // norm_coefficient * X + G
  Value* regularized(Value* x, Value* g) const {
    return op("Add", op("Mul", attr(x, "norm_coefficient", 0), x), g);
  }
  Value* positive_count() const { return op("Greater", count, c.scalar(DType::kI64, 0)); }
  Value* count_as(Value* like) const { return c.cast(count, like->type.dtype); }
};

void adapt_adagrad(AdaptContext& c) {
  Update u(c, 3);
  std::vector<Value*> xs, hs;
  for (size_t k = 0; k < u.n; ++k) {
    Value *x = u.in(0, k), *g = u.regularized(x, u.in(1, k)), *h = u.in(2, k);
    Value* decay = u.op("Mul", u.count_as(x), u.attr(x, "decay_factor", 0));
    Value* r = u.op("Div", c.cast(u.rate, x->type.dtype), u.op("Add", u.scalar(x, 1), decay));
    Value* h_new = u.op("Add", h, u.op("Mul", g, g));
    Value* adaptive = u.op("Add", c.emit("Sqrt", {h_new})[0], u.attr(x, "epsilon", 1e-6));
    xs.push_back(u.op("Sub", x, u.op("Div", u.op("Mul", r, g), adaptive)));
    hs.push_back(h_new);
  }
  xs.insert(xs.end(), hs.begin(), hs.end());
  c.results = xs;
}

void adapt_momentum(AdaptContext& c) {
  Update u(c, 3);
  std::string mode = c.string_attr("mode", "");
  TESSEL_USER_CHECK(mode == "standard" || mode == "nesterov", c.span())
      << "mode must be \"standard\" or \"nesterov\", got \"" << mode << "\"";
  std::vector<Value*> xs, vs;
  for (size_t k = 0; k < u.n; ++k) {
    Value *x = u.in(0, k), *g = u.regularized(x, u.in(1, k)), *v = u.in(2, k);
    Value* beta = c.emit("Where", {u.positive_count(), u.attr(x, "beta", 0), u.scalar(x, 1)})[0];
    Value* alpha = u.attr(x, "alpha", 0);
    Value* v_new = u.op("Add", u.op("Mul", alpha, v), u.op("Mul", beta, g));
    Value* step = mode == "standard" ? v_new : u.op("Add", g, u.op("Mul", alpha, v_new));
    xs.push_back(u.op("Sub", x, u.op("Mul", c.cast(u.rate, x->type.dtype), step)));
    vs.push_back(v_new);
  }
  xs.insert(xs.end(), vs.begin(), vs.end());
  c.results = xs;
}

void adapt_adam(AdaptContext& c) {
  Update u(c, 4);
  std::vector<Value*> xs, vs, hs;
  for (size_t k = 0; k < u.n; ++k) {
    Value *x = u.in(0, k), *g = u.regularized(x, u.in(1, k)), *v = u.in(2, k), *h = u.in(3, k);
    Value *alpha = u.attr(x, "alpha", 0.9), *beta = u.attr(x, "beta", 0.999);
    Value* v_new = u.op("Add", u.op("Mul", alpha, v), u.op("Mul", u.op("Sub", u.scalar(x, 1), alpha), g));
    Value* h_new =
        u.op("Add", u.op("Mul", beta, h), u.op("Mul", u.op("Sub", u.scalar(x, 1), beta), u.op("Mul", g, g)));
    Value* h_sqrt = u.op("Add", c.emit("Sqrt", {h_new})[0], u.attr(x, "epsilon", 1e-6));
    Value* t = u.count_as(x);
    Value* rate = c.cast(u.rate, x->type.dtype);
    Value* bias = u.op("Div", c.emit("Sqrt", {u.op("Sub", u.scalar(x, 1), u.op("Pow", beta, t))})[0],
                       u.op("Sub", u.scalar(x, 1), u.op("Pow", alpha, t)));
    Value* adjusted = c.emit("Where", {u.positive_count(), u.op("Mul", rate, bias), rate})[0];
    Value* x_new = u.op("Sub", x, u.op("Mul", adjusted, u.op("Div", v_new, h_sqrt)));
    xs.push_back(u.op("Mul", u.op("Sub", u.scalar(x, 1), u.attr(x, "norm_coefficient_post", 0)), x_new));
    vs.push_back(v_new);
    hs.push_back(h_new);
  }
  xs.insert(xs.end(), vs.begin(), vs.end());
  xs.insert(xs.end(), hs.begin(), hs.end());
  c.results = xs;
}

}  // namespace

const AdapterTable& training_adapters() {
  static const AdapterTable table = {
      {"Adagrad", adapt_adagrad}, {"Adam", adapt_adam}, {"Momentum", adapt_momentum}};
  return table;
}

const AdapterTable* domain_adapters(const std::string& domain) {
  if (domain == kMlDomain) return &ml_adapters();
  if (domain == kTrainingDomain) return &training_adapters();
  if (domain == kPreviewDomain) return &preview_adapters();
  return nullptr;
}

}  // namespace tessel::onnx_frontend
