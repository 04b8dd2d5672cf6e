// Checks of the data that decides an address or would trap: gathered and
// scattered indices in range, integer divisors not zero. A constant input is
// checked while lowering (a user error naming the node); any other gets a
// check block (LowerContext::check) that runs before the blocks reading it.
#include "ir/core/diagnostics.h"
#include "src/lower/ops/elem_lowerings.h"

namespace tessel::lower {

using namespace tir;

namespace {

// The most position coordinates a run-time message shows (an assert carries
// at most kMaxAssertValues values, one of them the offending element).
constexpr size_t kMaxShownCoords = AssertNode::kMaxAssertValues - 1;

// "name[{}, {}, 2]" for a check over `coords` coordinates (a fixed last
// coordinate when component >= 0), or "an element of name" when too many.
std::string position_text(const std::string& name, size_t coords, int64_t component) {
  if (coords > kMaxShownCoords) return "an element of " + name;
  std::string text = name + "[";
  for (size_t d = 0; d < coords; ++d) text += d ? ", {}" : "{}";
  if (component >= 0) text += std::string(coords ? ", " : "") + std::to_string(component);
  return text + "]";
}

std::vector<Expr> position_values(const Index& at) {
  return at.size() > kMaxShownCoords ? std::vector<Expr>{} : at;
}

// "[3, 1]" of a row-major flat position in shape.
std::string position_of(int64_t flat, const std::vector<int64_t>& shape) {
  std::vector<int64_t> at(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    at[d] = shape[d] ? flat % shape[d] : 0;
    flat = shape[d] ? flat / shape[d] : 0;
  }
  std::string text = "[";
  for (size_t d = 0; d < at.size(); ++d) text += (d ? ", " : "") + std::to_string(at[d]);
  return text + "]";
}

std::string range_text(int64_t extent) {
  return "[" + std::to_string(-extent) + ", " + std::to_string(extent) + ")";
}

}  // namespace

void require_indices_in_range(LowerContext& ctx, const graph::Node& node, size_t input,
                              const TensorExpr& indices, int64_t extent, const std::string& what,
                              int64_t component) {
  std::string tail = " is out of range " + range_text(extent) + " for " + what;
  const graph::Value* v = node.inputs[input];
  if (v->is_constant()) {
    const Tensor& t = *v->constant;
    int64_t k = component >= 0 ? t.shape().back() : 1;
    for (int64_t flat = component >= 0 ? component : 0; flat < t.numel(); flat += k) {
      int64_t i = t.get_i64(flat);
      TESSEL_USER_CHECK(i >= -extent && i < extent, node.span())
          << "indices" << position_of(flat, t.shape()) << " = " << i << tail;
    }
    return;
  }
  std::vector<int64_t> extents = indices.shape;
  if (component >= 0) extents.pop_back();
  std::string message =
      node.span().str() + ": " + position_text("indices", extents.size(), component) + " = {}" + tail;
  ctx.check(node.name.empty() ? node.op + "_check" : node.name + "_check", extents, [&](const Index& at) {
    Index read = at;
    if (component >= 0) read.push_back(int_imm(component));
    Expr i = cast(kIndexType, indices.at(read));
    std::vector<Expr> values = position_values(at);
    values.push_back(i);
    return std::vector<LowerContext::Assertion>{
        {ge(i, int_imm(-extent)) && lt(i, int_imm(extent)), message, std::move(values)}};
  });
}

void require_nonzero(LowerContext& ctx, const graph::Node& node, size_t input, const TensorExpr& divisor) {
  if (!is_integer(divisor.dtype)) return;
  std::string tail = " is 0: integer division by zero";
  const graph::Value* v = node.inputs[input];
  if (v->is_constant()) {
    const Tensor& t = *v->constant;
    for (int64_t flat = 0; flat < t.numel(); ++flat)
      TESSEL_USER_CHECK(t.get_i64(flat) != 0, node.span())
          << "divisor B" << position_of(flat, t.shape()) << tail;
    return;
  }
  std::string message =
      node.span().str() + ": divisor " + position_text("B", divisor.shape.size(), -1) + tail;
  ctx.check(node.name.empty() ? node.op + "_check" : node.name + "_check", divisor.shape,
            [&](const Index& at) {
              Expr b = divisor.at(at);
              return std::vector<LowerContext::Assertion>{
                  {ne(b, const_of(b->dtype, 0)), message, position_values(at)}};
            });
}

}  // namespace tessel::lower
