// Compute definitions: blocks and loop nests built from index functions.
#include "src/lower/compute.h"

#include <algorithm>
#include <limits>

#include "ir/core/diagnostics.h"
#include "ir/tensor/access_region.h"
#include "ir/tensor/functor.h"
#include "ir/tensor/simplify.h"
#include "src/passes/channels_last.h"

namespace tessel::lower {

using namespace tir;

TensorExpr from_buffer(const Buffer& buffer) {
  TensorExpr t;
  t.shape = buffer->shape;
  t.dtype = buffer->dtype;
  t.buffer = buffer;
  t.at = [buffer](const std::vector<Expr>& idx) { return load(buffer, idx); };
  return t;
}

namespace {

// The smallest and largest value of an integer dtype as the tensor IR holds
// them, in an int64 (u64's largest is all ones, -1).
std::pair<int64_t, int64_t> int_limits(DType dtype) {
  return dispatch_dtype(dtype, [](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_integral_v<T>)
      return std::pair<int64_t, int64_t>(int64_t(std::numeric_limits<T>::min()),
                                         int64_t(std::numeric_limits<T>::max()));
    else
      return std::pair<int64_t, int64_t>(0, 0);
  });
}

}  // namespace

Expr combiner_identity(Combiner c, DType dtype) {
  switch (c) {
    case Combiner::kSum: return const_of(dtype, 0);
    case Combiner::kProd: return const_of(dtype, 1);
    case Combiner::kMax:
      if (is_float(dtype)) return float_imm(-std::numeric_limits<double>::infinity(), dtype);
      if (dtype == DType::kBool) return bool_imm(false);
      return int_imm(int_limits(dtype).first, dtype);
    case Combiner::kMin:
      if (is_float(dtype)) return float_imm(std::numeric_limits<double>::infinity(), dtype);
      if (dtype == DType::kBool) return bool_imm(true);
      return int_imm(int_limits(dtype).second, dtype);
  }
  return {};
}

Expr combine(Combiner c, Expr acc, Expr value) {
  switch (c) {
    case Combiner::kSum: return add(std::move(acc), std::move(value));
    case Combiner::kProd: return mul(std::move(acc), std::move(value));
    case Combiner::kMax: return max(std::move(acc), std::move(value));
    case Combiner::kMin: return min(std::move(acc), std::move(value));
  }
  return {};
}

LowerContext::LowerContext(std::string func_name, LayoutChoices layouts)
    : name_(std::move(func_name)), layouts_(std::move(layouts)) {}

std::string LowerContext::unique_block_name(const std::string& base) {
  std::string name = base.empty() ? "block" : base;
  for (int i = 1; std::find(used_names_.begin(), used_names_.end(), name) != used_names_.end(); ++i)
    name = base + "_" + std::to_string(i);
  used_names_.push_back(name);
  return name;
}

namespace {

// v's elements in the order `storage` lists dimensions, and back.
template <typename T>
std::vector<T> in_storage_order(const std::vector<T>& v, const std::vector<int64_t>& storage) {
  std::vector<T> out;
  for (int64_t d : storage) out.push_back(v[size_t(d)]);
  return out;
}
template <typename T>
std::vector<T> from_storage_order(const std::vector<T>& v, const std::vector<int64_t>& storage) {
  std::vector<T> out(v.size());
  for (size_t k = 0; k < storage.size(); ++k) out[size_t(storage[k])] = v[k];
  return out;
}

// A value of `shape` read from buffer b, which stores its dimensions in the order `storage` lists.
TensorExpr stored_in(const Buffer& b, const std::vector<int64_t>& shape,
                     const std::vector<int64_t>& storage) {
  TensorExpr t = from_buffer(b);
  if (storage.empty()) return t;
  t.shape = shape;
  t.storage = storage;
  t.at = [b, storage](const std::vector<Expr>& idx) { return load(b, in_storage_order(idx, storage)); };
  return t;
}

}  // namespace

TensorExpr LowerContext::input(const std::string& name, DType dtype, const std::vector<int64_t>& shape,
                               const std::vector<int64_t>& storage) {
  Buffer b = make_buffer(name, dtype, storage.empty() ? shape : in_storage_order(shape, storage));
  inputs_.push_back(b);
  return stored_in(b, shape, storage);
}

namespace {

// for v0 in 0..e0: for v1 ...: <block>; the loops are bound one-to-one to the
// block's iteration variables, in order.
Stmt nest_block(const std::string& name, std::vector<IterVar> iter_vars, Stmt init, Stmt body) {
  std::vector<Var> loops;
  std::vector<Expr> values;
  for (size_t i = 0; i < iter_vars.size(); ++i) {
    loops.push_back(
        var(iter_vars[i].kind == IterKind::kSpatial ? "i" + std::to_string(i) : "k" + std::to_string(i)));
    values.push_back(loops.back());
  }
  BlockNode proto(name, iter_vars, values, bool_imm(true), {}, {}, init, body, {}, {});
  Stmt s = with_detected_regions(proto);
  for (size_t i = iter_vars.size(); i-- > 0;)
    s = make_for(loops[i], int_imm(0), iter_vars[i].dom.extent, ForKind::kSerial, s);
  return s;
}

std::vector<IterVar> make_iter_vars(const std::vector<int64_t>& extents, IterKind kind, const char* prefix,
                                    size_t first = 0) {
  std::vector<IterVar> ivs;
  for (size_t i = 0; i < extents.size(); ++i)
    ivs.push_back({var(prefix + std::to_string(first + i)), {int_imm(0), int_imm(extents[i])}, kind});
  return ivs;
}

std::vector<Expr> vars_of(const std::vector<IterVar>& ivs, size_t begin, size_t end) {
  std::vector<Expr> out;
  for (size_t i = begin; i < end; ++i) out.push_back(ivs[i].var);
  return out;
}

}  // namespace

TensorExpr LowerContext::compute(const std::string& name, const std::vector<int64_t>& shape, DType dtype,
                                 const IndexFn& value, int flat_tail) {
  return compute_in_parts(name, shape, dtype, value, flat_tail, 0, {});
}

TensorExpr LowerContext::compute_stored(const std::string& name, const std::vector<int64_t>& shape,
                                        DType dtype, const IndexFn& value,
                                        const std::vector<int64_t>& storage, bool flat_positions) {
  if (storage.empty()) return compute(name, shape, dtype, value);
  std::vector<int64_t> stored_shape = in_storage_order(shape, storage);
  bool positions_adjacent = shape.size() == 4 && storage == passes::channels_last_storage();
  if (!flat_positions || !positions_adjacent) {
    TensorExpr stored = compute(name, stored_shape, dtype, [&](const std::vector<Expr>& idx) {
      return value(from_storage_order(idx, storage));
    });
    return stored_in(stored.buffer, shape, storage);
  }
  // Over [N, H * W, C]: the value read at position f = h * W + w, which a
  // channels-last conv's result holds at its own index.
  std::string block = unique_block_name(name);
  Buffer out = make_buffer(block, dtype, stored_shape);
  intermediates_.push_back(out);
  std::vector<IterVar> ivs =
      make_iter_vars({shape[0], shape[2] * shape[3], shape[1]}, IterKind::kSpatial, "v");
  Analyzer analyzer;
  analyzer.bind(ivs[1].var, ivs[1].dom);
  Expr h = analyzer.simplify(floordiv(ivs[1].var, int_imm(shape[3])));
  Expr w = analyzer.simplify(floormod(ivs[1].var, int_imm(shape[3])));
  Expr v = analyzer.simplify(value({ivs[0].var, ivs[2].var, h, w}));
  TESSEL_ICHECK(v->dtype == dtype) << "compute " << name << ": value is " << dtype_name(v->dtype);
  stages_.push_back(
      nest_block(block, std::move(ivs), Stmt{}, make_store(out, v, {ivs[0].var, h, w, ivs[2].var})));
  return stored_in(out, shape, storage);
}

TensorExpr LowerContext::materialize(const std::string& name, const TensorExpr& t) {
  return compute_in_parts(name, t.shape, t.dtype, t.at, t.flat_tail, t.flat_head, t.parts);
}

// compute, its flat positions from flat_head on (when that is inside the
// flat dimensions) in a block of their own, or (not flat) a block per part.
TensorExpr LowerContext::compute_in_parts(const std::string& name, const std::vector<int64_t>& shape,
                                          DType dtype, const IndexFn& value, int flat_tail, int64_t flat_head,
                                          const AxisParts& parts) {
  std::string block = unique_block_name(name);
  Buffer out = make_buffer(block, dtype, shape);
  intermediates_.push_back(out);
  size_t lead = flat_tail >= 2 && size_t(flat_tail) <= shape.size() ? shape.size() - size_t(flat_tail) : shape.size();
  bool parted =
      parts.split() && size_t(parts.axis) < shape.size() && parts.ends.back() == shape[size_t(parts.axis)];
  if (lead == shape.size() && parted) {
    for (size_t k = 0; k < parts.ends.size(); ++k)
      add_part_block(k == 0 ? block : unique_block_name(name + "_part"), out, parts, k, value);
    return from_buffer(out);
  }
  if (lead == shape.size()) {
    std::vector<IterVar> ivs = make_iter_vars(shape, IterKind::kSpatial, "v");
    std::vector<Expr> idx = vars_of(ivs, 0, lead);
    Expr v = value(idx);
    TESSEL_ICHECK(v->dtype == dtype) << "compute " << name << ": value is " << dtype_name(v->dtype);
    stages_.push_back(nest_block(block, std::move(ivs), Stmt{}, make_store(out, v, idx)));
    return from_buffer(out);
  }
  int64_t flat = 1;
  for (size_t d = lead; d < shape.size(); ++d) flat *= shape[d];
  if (flat_head <= 0 || flat_head >= flat) {
    add_flat_block(block, out, lead, 0, flat, value);
  } else {
    add_flat_block(block, out, lead, 0, flat_head, value);
    add_flat_block(unique_block_name(name + "_tail"), out, lead, flat_head, flat - flat_head, value);
  }
  return from_buffer(out);
}

// A block writing part k of out (AxisParts), its value simplified knowing
// the part's range along the axis.
void LowerContext::add_part_block(const std::string& block, const Buffer& out, const AxisParts& parts,
                                  size_t k, const IndexFn& value) {
  size_t axis = size_t(parts.axis);
  int64_t start = k == 0 ? 0 : parts.ends[k - 1];
  std::vector<int64_t> domain = out->shape;
  domain[axis] = parts.ends[k] - start;
  std::vector<IterVar> ivs = make_iter_vars(domain, IterKind::kSpatial, "v");
  Analyzer analyzer;
  for (const IterVar& iv : ivs) analyzer.bind(iv.var, iv.dom);
  std::vector<Expr> idx = vars_of(ivs, 0, ivs.size());
  if (start != 0) idx[axis] = idx[axis] + start;
  Expr v = analyzer.simplify(value(idx));
  TESSEL_ICHECK(v->dtype == out->dtype) << "compute " << block << ": value is " << dtype_name(v->dtype);
  stages_.push_back(nest_block(block, std::move(ivs), Stmt{}, make_store(out, v, idx)));
}

// A block writing out's flat positions [first, first + count) of its trailing
// dimensions from `lead` on (out[..., f // W, f % W] = value(..., f // W, f % W)),
// simplified knowing the positions' range.
void LowerContext::add_flat_block(const std::string& block, const Buffer& out, size_t lead, int64_t first,
                                  int64_t count, const IndexFn& value) {
  const std::vector<int64_t>& shape = out->shape;
  std::vector<int64_t> domain(shape.begin(), shape.begin() + long(lead));
  domain.push_back(count);
  std::vector<IterVar> ivs = make_iter_vars(domain, IterKind::kSpatial, "v");
  // Only the flat index is bound: a unit dimension's variable simplified to 0
  // would no longer read the producer at the block's own variables, which
  // compute_at and reverse_compute_at need.
  Analyzer analyzer;
  analyzer.bind(ivs.back().var, ivs.back().dom);
  std::vector<Expr> idx = vars_of(ivs, 0, lead);
  Expr rest = first == 0 ? Expr(ivs.back().var) : ivs.back().var + first;
  std::vector<Expr> tail(shape.size() - lead);
  for (size_t d = shape.size(); d-- > lead;) {  // row-major position of the flat index
    tail[d - lead] = d == lead ? rest : analyzer.simplify(floormod(rest, int_imm(shape[d])));
    rest = floordiv(rest, int_imm(shape[d]));
  }
  idx.insert(idx.end(), tail.begin(), tail.end());
  Expr v = analyzer.simplify(value(idx));
  TESSEL_ICHECK(v->dtype == out->dtype) << "compute " << block << ": value is " << dtype_name(v->dtype);
  stages_.push_back(nest_block(block, std::move(ivs), Stmt{}, make_store(out, v, idx)));
}

TensorExpr LowerContext::reduce(const std::string& name, const std::vector<int64_t>& shape, DType dtype,
                                const std::vector<int64_t>& reduce_extents, Combiner combiner,
                                const ReduceFn& value, Expr init) {
  Expr start = init.defined() ? init : combiner_identity(combiner, dtype);
  // An empty reduction domain never reaches the init (it runs at the first
  // reduction iteration): the result is the start value, a complete block.
  for (int64_t e : reduce_extents)
    if (e == 0) return compute(name, shape, dtype, [&](const std::vector<Expr>&) { return start; });
  std::string block = unique_block_name(name);
  Buffer out = make_buffer(block, dtype, shape);
  intermediates_.push_back(out);
  std::vector<IterVar> ivs = make_iter_vars(shape, IterKind::kSpatial, "v");
  std::vector<IterVar> rvs = make_iter_vars(reduce_extents, IterKind::kReduce, "r");
  std::vector<Expr> s_idx = vars_of(ivs, 0, ivs.size()), r_idx = vars_of(rvs, 0, rvs.size());
  ivs.insert(ivs.end(), rvs.begin(), rvs.end());
  Expr v = value(s_idx, r_idx);
  TESSEL_ICHECK(v->dtype == dtype) << "reduce " << name << ": value is " << dtype_name(v->dtype);
  Stmt init_stmt = make_store(out, start, s_idx);
  Stmt body = make_store(out, combine(combiner, load(out, s_idx), v), s_idx);
  stages_.push_back(nest_block(block, std::move(ivs), init_stmt, body));
  return from_buffer(out);
}

void LowerContext::check(const std::string& name, const std::vector<int64_t>& extents, const CheckFn& check) {
  std::string block = unique_block_name(name);
  std::vector<IterVar> ivs = make_iter_vars(extents, IterKind::kSpatial, "v");
  std::vector<Stmt> asserts;
  for (Assertion& a : check(vars_of(ivs, 0, ivs.size())))
    asserts.push_back(make_assert(std::move(a.cond), std::move(a.message), std::move(a.values)));
  if (asserts.empty()) return;
  stages_.push_back(nest_block(block, std::move(ivs), Stmt{}, make_seq(std::move(asserts))));
}

void LowerContext::output(const std::string& name, const TensorExpr& t, const std::vector<int64_t>& storage) {
  if (!storage.empty()) {
    output(name, from_buffer(compute_stored(name, t.shape, t.dtype, t.at, storage, t.flat_positions).buffer));
    return;
  }
  auto owned = std::find_if(intermediates_.begin(), intermediates_.end(),
                            [&](const Buffer& b) { return t.buffer.defined() && b.same_as(t.buffer); });
  if (owned != intermediates_.end()) {
    Buffer out = make_buffer(name, t.dtype, t.shape);
    BufferMap rename{{owned->get(), out}};
    for (Stmt& s : stages_) s = substitute_buffers(s, rename);
    intermediates_.erase(owned);
    outputs_.push_back(out);
    return;
  }
  // A value whose flat positions from flat_head on read a tail: two blocks,
  // the head's positions (which can join the head's register tiles) and the
  // tail's, writing one output; a value in parts: a block per part.
  output(name, materialize(name, t));
}

PrimFunc LowerContext::finish() {
  return make_prim_func(name_, inputs_, outputs_, make_root_block(make_seq(stages_), intermediates_));
}

std::vector<int64_t> static_shape(const graph::TensorType& type, const Span& span) {
  TESSEL_USER_CHECK(type.rank_known && type.is_static(), span)
      << "lowering needs static shapes, got " << type.str() << " (bind inputs with --input-shape)";
  return type.static_dims();
}

}  // namespace tessel::lower
