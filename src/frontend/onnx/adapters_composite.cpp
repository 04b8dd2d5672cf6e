// Ops that ONNX defines as compositions of others become those graph ops:
// CumSum and CumProd (a masked sum or product over the axis), Hardmax (ArgMax compared with the positions
// along the axis), OneHot (the same comparison with the indices), LpNormalization (a division by the norm),
// LpPool (an average pool of |x|^p scaled to a sum), EyeLike (a constant), MeanVarianceNormalization and
// Det (the Leibniz formula, for matrices up to 5x5).
// Fusion puts each back into one or two kernels, so a dedicated lowering would only repeat the rules.
#include <algorithm>
#include <numeric>

#include "src/frontend/onnx/adapters.h"
#include "src/frontend/onnx/tensor_proto.h"

namespace tessel::onnx_frontend {

namespace {

// The input's rank and, when `axis` is given, that axis normalised with its
// static extent; both must be known to build the comparison below.
int64_t static_axis(const AdaptContext& c, const graph::Value* x, int64_t axis, int64_t* extent) {
  const graph::TensorType& t = x->type;
  TESSEL_USER_CHECK(t.rank_known, c.span()) << c.op << " needs an input of known rank, got " << t.str();
  TESSEL_USER_CHECK(axis >= -t.rank() && axis < t.rank(), c.span())
      << "axis " << axis << " is out of range for rank " << t.rank();
  if (axis < 0) axis += t.rank();
  if (extent) {
    TESSEL_USER_CHECK(t.dims[size_t(axis)].is_known(), c.span())
        << c.op << " needs a static extent along axis " << axis << ", got " << t.str();
    *extent = t.dims[size_t(axis)].value;
  }
  return axis;
}

graph::Attrs attrs_with(std::initializer_list<std::pair<const char*, graph::AttrValue>> list) {
  graph::Attrs a;
  for (const auto& [k, v] : list) a.set(k, v);
  return a;
}

// 1 at the first maximum along the axis, 0 elsewhere. Before opset 13 the
// input is coerced to 2-D at `axis` (default 1), as Softmax was.
void adapt_hardmax(AdaptContext& c) {
  graph::Value* x = c.required_input(0, "input");
  bool coerced = c.opset < 13;
  int64_t axis = c.int_attr("axis", coerced ? 1 : -1);
  graph::Value* in = x;
  if (coerced) {
    static_axis(c, x, axis, nullptr);
    in = c.emit("Flatten", {x}, attrs_with({{"axis", axis}}))[0];
    axis = 1;
  }
  int64_t extent = 0;
  axis = static_axis(c, in, axis, &extent);
  graph::Value* at = c.emit("ArgMax", {in}, attrs_with({{"axis", axis}, {"keepdims", int64_t(1)}}))[0];
  graph::Value* hit = c.emit("Equal", {at, c.positions_along(in->type.rank(), axis, extent)})[0];
  graph::Value* y = c.cast(hit, x->type.dtype);
  if (coerced) y = c.emit("Reshape", {y, c.emit("Shape", {x})[0]})[0];
  c.results = std::vector<graph::Value*>{y};
}

// values[1] where the index (negative ones counted from the end) is the
// position along the new axis, values[0] elsewhere; an index outside
// [-depth, depth) matches no position, as ONNX specifies.
void adapt_one_hot(AdaptContext& c) {
  graph::Value* indices = c.required_input(0, "indices");
  c.required_input(1, "depth");
  graph::Value* values = c.required_input(2, "values");
  const Tensor* depth = c.constant_input(1);
  TESSEL_USER_CHECK(depth && depth->numel() == 1, c.span())
      << "depth must be a constant scalar (it decides the output's shape)";
  int64_t n = depth->get_i64(0);
  TESSEL_USER_CHECK(n > 0, c.span()) << "depth must be positive, got " << n;
  TESSEL_USER_CHECK(indices->type.rank_known, c.span()) << "the indices need a known rank";
  int64_t rank = indices->type.rank() + 1, axis = c.int_attr("axis", -1);
  TESSEL_USER_CHECK(axis >= -rank && axis < rank, c.span())
      << "axis " << axis << " is out of range for rank " << rank;
  if (axis < 0) axis += rank;
  graph::Value* index = c.cast(indices, DType::kI64);
  graph::Value* zero = c.constant(Tensor::from_i64({0}, {}));
  graph::Value* wrapped = c.emit("Add", {index, c.constant(Tensor::from_i64({n}, {}))})[0];
  index = c.emit("Where", {c.emit("Less", {index, zero})[0], wrapped, index})[0];
  index = c.emit("Unsqueeze", {index, c.constant(Tensor::from_i64({axis}, {1}))})[0];
  graph::Value* hit = c.emit("Equal", {index, c.positions_along(rank, axis, n)})[0];
  graph::Value* off = c.emit("Gather", {values, zero})[0];
  graph::Value* on = c.emit("Gather", {values, c.constant(Tensor::from_i64({1}, {}))})[0];
  c.results = c.emit("Where", {hit, on, off});
}

// x / ||x||_p along the axis (p is 1 or 2).
void adapt_lp_normalization(AdaptContext& c) {
  graph::Value* x = c.required_input(0, "input");
  int64_t p = c.int_attr("p", 2), axis = c.int_attr("axis", -1);
  TESSEL_USER_CHECK(p == 1 || p == 2, c.span()) << "p must be 1 or 2, got " << p;
  graph::Value* axes = c.constant(Tensor::from_i64({axis}, {1}));
  graph::Value* norm =
      c.emit(p == 1 ? "ReduceL1" : "ReduceL2", {x, axes}, attrs_with({{"keepdims", int64_t(1)}}))[0];
  // A zero vector stays zero (ONNX's reference and ONNX Runtime), not 0 / 0.
  graph::Value* zero = c.scalar(x->type.dtype, 0.0);
  graph::Value* is_zero = c.emit("Equal", {norm, zero})[0];
  graph::Value* divisor = c.emit("Where", {is_zero, c.scalar(x->type.dtype, 1.0), norm})[0];
  c.results = c.emit("Div", {x, divisor});
}

// (sum over the window of |x|^p)^(1/p): an AveragePool that counts padding
// (whose zeros add nothing) times the window's size is the sum.
void adapt_lp_pool(AdaptContext& c) {
  graph::Value* x = c.required_input(0, "input");
  TESSEL_USER_CHECK(c.int_attr("ceil_mode", 0) == 0, c.span())
      << "LpPool with ceil_mode=1 is not supported (a partial window's sum would be rescaled)";
  const graph::AttrValue* kernel = c.attrs.find("kernel_shape");
  const auto* dims = kernel ? std::get_if<std::vector<int64_t>>(kernel) : nullptr;
  TESSEL_USER_CHECK(dims && !dims->empty(), c.span()) << "missing required attribute 'kernel_shape'";
  int64_t window = std::accumulate(dims->begin(), dims->end(), int64_t(1), std::multiplies<>());
  double p = double(c.int_attr("p", 2));
  TESSEL_USER_CHECK(p > 0, c.span()) << "p must be positive, got " << p;
  DType t = x->type.dtype;
  graph::Attrs pool = c.attrs;
  pool.erase("p");
  pool.set("count_include_pad", int64_t(1));
  graph::Value* powered = c.emit("Pow", {c.emit("Abs", {x})[0], c.constant(Tensor::scalar_f64(t, p))})[0];
  graph::Value* mean = c.emit("AveragePool", {powered}, pool)[0];
  graph::Value* sum = c.emit("Mul", {mean, c.constant(Tensor::scalar_f64(t, double(window)))})[0];
  c.results = c.emit("Pow", {sum, c.constant(Tensor::scalar_f64(t, 1.0 / p))});
}

// A constant: ones on the k-th diagonal of the input's (static, 2-D) shape.
void adapt_eye_like(AdaptContext& c) {
  graph::Value* x = c.required_input(0, "input");
  const graph::TensorType& t = x->type;
  TESSEL_USER_CHECK(t.rank_known && t.rank() == 2 && t.dims[0].is_known() && t.dims[1].is_known(), c.span())
      << "EyeLike needs a 2-D input of static shape, got " << t.str();
  DType dtype = t.dtype;
  if (c.attrs.find("dtype")) {
    auto to = dtype_from_onnx(int(c.int_attr("dtype", 0)));
    TESSEL_USER_CHECK(to.has_value(), c.span()) << "attribute 'dtype' names an unsupported type";
    dtype = *to;
  }
  int64_t rows = t.dims[0].value, cols = t.dims[1].value, k = c.int_attr("k", 0);
  Tensor eye(dtype, {rows, cols});
  for (int64_t r = 0; r < rows; ++r)
    if (r + k >= 0 && r + k < cols) eye.set_i64(r * cols + r + k, 1);
  c.results = std::vector<graph::Value*>{c.constant(std::move(eye))};
}

// (x - mean) / sqrt(variance + 1e-9) over `axes` (default N, H, W).
void adapt_mean_variance_normalization(AdaptContext& c) {
  graph::Value* x = c.required_input(0, "input");
  std::vector<int64_t> axes = {0, 2, 3};
  if (const graph::AttrValue* a = c.attrs.find("axes")) {
    const auto* list = std::get_if<std::vector<int64_t>>(a);
    TESSEL_USER_CHECK(list != nullptr, c.span()) << "attribute 'axes' must be a list of ints";
    axes = *list;
  }
  graph::Value* axes_v = c.constant(Tensor::from_i64(axes, {int64_t(axes.size())}));
  graph::Attrs keep = attrs_with({{"keepdims", int64_t(1)}});
  graph::Value* centred = c.emit("Sub", {x, c.emit("ReduceMean", {x, axes_v}, keep)[0]})[0];
  graph::Value* variance = c.emit("ReduceMean", {c.emit("Mul", {centred, centred})[0], axes_v}, keep)[0];
  graph::Value* eps = c.constant(Tensor::scalar_f64(x->type.dtype, 1e-9));
  c.results = c.emit("Div", {centred, c.emit("Sqrt", {c.emit("Add", {variance, eps})[0]})[0]});
}

// An axis moved last (a Transpose, unless it is last already) and back.
class AxisLast {
 public:
  AxisLast(int64_t axis, int64_t rank) : moved_(axis != rank - 1), back_(static_cast<size_t>(rank)) {
    for (int64_t d = 0; d < rank; ++d)
      if (d != axis) perm_.push_back(d);
    perm_.push_back(axis);
    for (int64_t d = 0; d < rank; ++d) back_[size_t(perm_[size_t(d)])] = d;
  }
  graph::Value* there(AdaptContext& c, graph::Value* v) const { return moved_ ? c.transpose(v, perm_) : v; }
  graph::Value* back(AdaptContext& c, graph::Value* v) const { return moved_ ? c.transpose(v, back_) : v; }

 private:
  bool moved_;
  std::vector<int64_t> perm_, back_;
};

// CumSum / CumProd along one axis: y[.., i] folds x[.., j] over the j that
// position i takes in (j <= i; j < i exclusive; mirrored reverse), as a sum or
// product over all j of Where(takes[i, j], x[j], identity). The select, not a
// product with a 0/1 matrix, keeps infinities and NaN where they belong; the
// work grows with the square of the axis.
void adapt_cumulative(AdaptContext& c) {
  graph::Value* x = c.required_input(0, "x");
  c.required_input(1, "axis");
  const Tensor* axis_t = c.constant_input(1);
  TESSEL_USER_CHECK(axis_t && axis_t->numel() == 1, c.span()) << "axis must be a constant scalar";
  int64_t extent = 0, axis = static_axis(c, x, axis_t->get_i64(0), &extent);
  bool exclusive = c.int_attr("exclusive", 0) != 0, reverse = c.int_attr("reverse", 0) != 0;
  AxisLast moved(axis, x->type.rank());
  graph::Value* last = moved.there(c, x);
  Tensor takes(DType::kBool, {extent, extent});
  for (int64_t i = 0; i < extent; ++i)
    for (int64_t j = 0; j < extent; ++j) {
      bool in = reverse ? j >= i : j <= i;
      takes.set_i64(i * extent + j, in && !(exclusive && i == j));
    }
  bool sum = c.op == "CumSum";
  graph::Value* row = c.emit("Unsqueeze", {last, c.i64_vector({-2})})[0];
  graph::Value* identity = c.scalar(x->type.dtype, sum ? 0.0 : 1.0);
  graph::Value* terms = c.emit("Where", {c.constant(std::move(takes)), row, identity})[0];
  graph::Value* y = c.emit(sum ? "ReduceSum" : "ReduceProd", {terms, c.i64_vector({-1})},
                           one_attr("keepdims", int64_t(0)))[0];
  c.results = std::vector<graph::Value*>{moved.back(c, y)};
}

// a ranks before b: greater (smaller when !largest), NaN above every number;
// equal values keep their order by position (before: position of b < a's).
graph::Value* ranks_before(AdaptContext& c, graph::Value* a, graph::Value* b, bool largest,
                           graph::Value* earlier) {
  graph::Value* beats = c.emit(largest ? "Greater" : "Less", {b, a})[0];  // false where either is NaN
  graph::Value* same = c.emit("Equal", {b, a})[0];
  if (is_float(a->type.dtype)) {
    graph::Value *nan_a = c.emit("IsNaN", {a})[0], *nan_b = c.emit("IsNaN", {b})[0];
    graph::Value* nan_first = largest ? c.emit("And", {nan_b, c.emit("Not", {nan_a})[0]})[0]
                                      : c.emit("And", {nan_a, c.emit("Not", {nan_b})[0]})[0];
    beats = c.emit("Or", {beats, nan_first})[0];
    same = c.emit("Or", {same, c.emit("And", {nan_a, nan_b})[0]})[0];
  }
  return c.emit("Or", {beats, c.emit("And", {same, earlier})[0]})[0];
}

// TopK: each element's rank is the number of elements ranked before it (a
// permutation, ties broken by position as ONNX asks); output p is the element
// of rank p. The comparison of every pair makes it quadratic in the axis.
void adapt_top_k(AdaptContext& c) {
  graph::Value* x = c.required_input(0, "X");
  c.required_input(1, "K");
  const Tensor* k_t = c.constant_input(1);
  TESSEL_USER_CHECK(k_t && k_t->numel() == 1, c.span())
      << "K must be a constant (it decides the outputs' shape)";
  int64_t n = 0, axis = static_axis(c, x, c.int_attr("axis", -1), &n), k = k_t->get_i64(0);
  TESSEL_USER_CHECK(k >= 0 && k <= n, c.span()) << "K = " << k << " is outside [0, " << n << "]";
  bool largest = c.int_attr("largest", 1) != 0;
  AxisLast moved(axis, x->type.rank());
  graph::Value* last = moved.there(c, x);
  graph::Value* mine = c.emit("Unsqueeze", {last, c.i64_vector({-1})})[0];   // [.., n (i), 1]
  graph::Value* other = c.emit("Unsqueeze", {last, c.i64_vector({-2})})[0];  // [.., 1, n (j)]
  Tensor earlier_t(DType::kBool, {n, n});
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j) earlier_t.set_i64(i * n + j, j < i);
  graph::Value* before = ranks_before(c, mine, other, largest, c.constant(std::move(earlier_t)));
  graph::Attrs drop = one_attr("keepdims", int64_t(0));
  graph::Value* ranks = c.emit("ReduceSum", {c.cast(before, DType::kI64), c.i64_vector({-1})}, drop)[0];
  std::vector<int64_t> wanted(static_cast<size_t>(k));
  for (int64_t p = 0; p < k; ++p) wanted[size_t(p)] = p;
  graph::Value* places = c.constant(Tensor::from_i64(wanted, {k, 1}));
  graph::Value* hit = c.emit("Equal", {c.emit("Unsqueeze", {ranks, c.i64_vector({-2})})[0], places})[0];
  graph::Attrs along = one_attr("axis", int64_t(-1));
  along.set("keepdims", int64_t(0));
  graph::Value* indices = c.emit("ArgMax", {c.cast(hit, DType::kI32)}, along)[0];
  graph::Value* values = c.emit("GatherElements", {last, indices}, one_attr("axis", int64_t(-1)))[0];
  c.results = std::vector<graph::Value*>{moved.back(c, values), moved.back(c, indices)};
}

// The determinant by the Leibniz formula: every permutation's product of
// entries (one Gather of all of them), signed and summed. Exact in its
// rounding for the small matrices it takes; larger ones are refused.
constexpr int64_t kMaxDeterminantSize = 5;

void adapt_det(AdaptContext& c) {
  graph::Value* x = c.required_input(0, "X");
  int rank = x->type.rank();
  TESSEL_USER_CHECK(rank >= 2, c.span()) << "X must be [..., M, M]";
  int64_t m = c.static_dim(x, -1, "X");
  TESSEL_USER_CHECK(c.static_dim(x, -2, "X") == m, c.span()) << "X's last two dimensions must be square";
  TESSEL_USER_CHECK(m >= 1 && m <= kMaxDeterminantSize, c.span())
      << "Det of " << m << "x" << m << " matrices is not supported (up to " << kMaxDeterminantSize << "x"
      << kMaxDeterminantSize << ")";
  std::vector<int64_t> perm(static_cast<size_t>(m)), picks, signs;
  std::iota(perm.begin(), perm.end(), 0);
  do {
    int64_t inversions = 0;
    for (size_t i = 0; i < perm.size(); ++i) {
      picks.push_back(int64_t(i) * m + perm[i]);
      for (size_t j = i + 1; j < perm.size(); ++j) inversions += perm[j] < perm[i];
    }
    signs.push_back(inversions % 2 ? -1 : 1);
  } while (std::next_permutation(perm.begin(), perm.end()));
  int64_t count = int64_t(signs.size());
  std::vector<int64_t> flat_shape;
  for (int d = 0; d < rank - 2; ++d) flat_shape.push_back(c.static_dim(x, d, "X"));
  flat_shape.push_back(m * m);
  graph::Value* flat = c.emit("Reshape", {x, c.i64_vector(flat_shape)})[0];
  graph::Value* entries = c.emit("Gather", {flat, c.constant(Tensor::from_i64(picks, {count, m}))},
                                 one_attr("axis", int64_t(rank - 2)))[0];  // [..., m!, m]
  graph::Value* products =
      c.emit("ReduceProd", {entries, c.i64_vector({-1})}, one_attr("keepdims", int64_t(0)))[0];
  Tensor sign(x->type.dtype, {count});
  for (int64_t i = 0; i < count; ++i) sign.set_f64(i, double(signs[size_t(i)]));
  graph::Value* signed_products = c.emit("Mul", {products, c.constant(std::move(sign))})[0];
  c.results = c.emit("ReduceSum", {signed_products, c.i64_vector({-1})}, one_attr("keepdims", int64_t(0)));
}

}  // namespace

void register_composite_adapters(AdapterTable& t) {
  t["Det"] = adapt_det;
  t["TopK"] = adapt_top_k;
  t["CumSum"] = adapt_cumulative;
  t["CumProd"] = adapt_cumulative;
  t["Hardmax"] = adapt_hardmax;
  t["OneHot"] = adapt_one_hot;
  t["LpNormalization"] = adapt_lp_normalization;
  t["LpPool"] = adapt_lp_pool;
  t["EyeLike"] = adapt_eye_like;
  t["MeanVarianceNormalization"] = adapt_mean_variance_normalization;
}

}  // namespace tessel::onnx_frontend
