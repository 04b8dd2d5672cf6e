// NonMaxSuppression as a composition: which box suppresses which (one
// [batch, box, box] comparison), each class's boxes ranked by score, then the
// greedy pass as a Scan over the ranks (each step decides one box of every
// batch and class against the boxes kept so far), and the kept boxes' triples
// moved first in (batch, class, rank) order: the output's extent is the
// number kept. Suppression follows ONNX Runtime: a box suppresses another when
// both have positive area and their intersection over union exceeds the
// threshold; equal scores rank the lower box index first.
#include <algorithm>
#include <memory>

#include "src/frontend/onnx/adapters_data_dependent.h"
#include "src/frontend/onnx/step_builder.h"
#include "src/passes/fold_constants.h"

namespace tessel::onnx_frontend {

namespace {

using graph::Value;

// The most pairs of boxes the composition compares (batches x classes x boxes^2).
constexpr int64_t kMaxComparisons = int64_t(1) << 28;

struct Sizes {
  int64_t batches, classes, boxes;
};

Value* column(AdaptContext& c, Value* boxes, int64_t k) {
  return c.emit("Gather", {boxes, c.constant(Tensor::from_i64({k}, {}))}, one_attr("axis", int64_t(2)))[0];
}

// suppresses[b, i, j]: box j, once kept, suppresses box i of batch b.
Value* suppression(AdaptContext& c, Value* boxes, Value* iou_threshold) {
  Value *lo_y, *lo_x, *hi_y, *hi_x;
  if (c.int_attr("center_point_box", 0)) {
    Value* half = c.scalar(boxes->type.dtype, 0.5);
    Value *cx = column(c, boxes, 0), *cy = column(c, boxes, 1);
    Value* half_w = c.emit("Mul", {column(c, boxes, 2), half})[0];
    Value* half_h = c.emit("Mul", {column(c, boxes, 3), half})[0];
    lo_x = c.emit("Sub", {cx, half_w})[0], hi_x = c.emit("Add", {cx, half_w})[0];
    lo_y = c.emit("Sub", {cy, half_h})[0], hi_y = c.emit("Add", {cy, half_h})[0];
  } else {  // any two opposite corners
    Value *y0 = column(c, boxes, 0), *x0 = column(c, boxes, 1), *y1 = column(c, boxes, 2),
          *x1 = column(c, boxes, 3);
    lo_y = c.emit("Min", {y0, y1})[0], hi_y = c.emit("Max", {y0, y1})[0];
    lo_x = c.emit("Min", {x0, x1})[0], hi_x = c.emit("Max", {x0, x1})[0];
  }
  auto mine = [&](Value* v) { return c.emit("Unsqueeze", {v, c.i64_vector({2})})[0]; };   // [B, i, 1]
  auto other = [&](Value* v) { return c.emit("Unsqueeze", {v, c.i64_vector({1})})[0]; };  // [B, 1, j]
  auto overlap = [&](Value* lo, Value* hi) {
    Value* span =
        c.emit("Sub", {c.emit("Min", {mine(hi), other(hi)})[0], c.emit("Max", {mine(lo), other(lo)})[0]})[0];
    return c.emit("Max", {span, c.scalar(boxes->type.dtype, 0)})[0];
  };
  Value* area = c.emit("Mul", {c.emit("Sub", {hi_y, lo_y})[0], c.emit("Sub", {hi_x, lo_x})[0]})[0];
  Value* inter = c.emit("Mul", {overlap(lo_y, hi_y), overlap(lo_x, hi_x)})[0];
  Value* both_areas = c.emit("Add", {mine(area), other(area)})[0];
  Value* joint = c.emit("Sub", {both_areas, inter})[0];
  Value* zero = c.scalar(boxes->type.dtype, 0);
  Value* positive = c.emit("Greater", {area, zero})[0];
  Value* counted = c.emit(
      "And", {c.emit("And", {mine(positive), other(positive)})[0], c.emit("Greater", {inter, zero})[0]})[0];
  counted = c.emit("And", {counted, c.emit("Greater", {joint, zero})[0]})[0];
  Value* iou = c.emit("Div", {inter, joint})[0];
  return c.emit("And", {counted, c.emit("Greater", {iou, c.cast(iou_threshold, boxes->type.dtype)})[0]})[0];
}

// Each class's box indices by descending score, equal scores by index: [B, C, N].
Value* ranked_boxes(AdaptContext& c, Value* scores, const Sizes& n) {
  Value* mine = c.emit("Unsqueeze", {scores, c.i64_vector({3})})[0];   // [B, C, i, 1]
  Value* other = c.emit("Unsqueeze", {scores, c.i64_vector({2})})[0];  // [B, C, 1, j]
  Value* tie =
      c.emit("And", {c.emit("Equal", {other, mine})[0], earlier_positions(c, n.boxes, DType::kBool)})[0];
  Value* before = c.emit("Or", {c.emit("Greater", {other, mine})[0], tie})[0];
  Value* rank = c.emit("ReduceSum", {c.cast(before, DType::kI64), c.i64_vector({3})},
                       one_attr("keepdims", int64_t(0)))[0];
  Value* positions = c.positions_along(3, 2, n.boxes);
  Value* every = c.emit("Expand", {positions, c.i64_vector({n.batches, n.classes, n.boxes})})[0];
  Value* zeros = c.constant(Tensor(DType::kI64, {n.batches, n.classes, n.boxes}));
  return c.emit("ScatterElements", {zeros, rank, every}, one_attr("axis", int64_t(2)))[0];
}

// The greedy pass: kept[r, b, c] says whether the box of rank r of class c
// survives. States: the kept boxes of each class (by box index) and their count.
Value* greedy_pass(AdaptContext& c, Value* ranked, Value* ranked_scores, Value* suppresses,
                   Value* score_threshold, Value* max_per_class, const Sizes& n) {
  Value* candidates = c.transpose(ranked, {2, 0, 1});  // [N, B, C]
  Value* candidate_scores = c.transpose(ranked_scores, {2, 0, 1});
  Value* flat_suppresses = c.emit("Reshape", {suppresses, c.i64_vector({n.batches * n.boxes, n.boxes})})[0];
  Value* kept0 = c.constant(Tensor(DType::kBool, {n.batches, n.classes, n.boxes}));
  Value* count0 = c.constant(Tensor(DType::kI64, {n.batches, n.classes}));

  auto body = std::make_shared<graph::Graph>();
  body->name = c.name + "/step";
  StepBuilder s(c, body);
  AdaptContext& b = s.b();
  Value* kept = s.input("kept", kept0->type);
  Value* count = s.input("count", count0->type);
  Value* box = s.input("box", graph::TensorType(DType::kI64, Dims{n.batches, n.classes}));
  Value* score = s.input("score", graph::TensorType(ranked_scores->type.dtype, Dims{n.batches, n.classes}));
  Value* row_of = b.emit("Add", {box, b.emit("Mul", {b.positions_along(2, 0, n.batches),
                                                     b.scalar(DType::kI64, double(n.boxes))})[0]})[0];
  Value* row = b.emit("Gather", {s.capture(flat_suppresses), row_of}, one_attr("axis", int64_t(0)))[0];
  Value* hit = b.emit("ReduceMax", {b.cast(b.emit("And", {row, kept})[0], DType::kI32), b.i64_vector({2})},
                      one_attr("keepdims", int64_t(0)))[0];
  Value* keep = b.emit("Equal", {hit, b.scalar(DType::kI32, 0)})[0];
  keep = b.emit("And", {keep, b.emit("Less", {count, s.capture(max_per_class)})[0]})[0];
  if (score_threshold)
    keep = b.emit(
        "And",
        {keep, b.emit("Greater", {score, b.cast(s.capture(score_threshold), score->type.dtype)})[0]})[0];
  Value* one_hot = b.emit(
      "Equal", {b.emit("Unsqueeze", {box, b.i64_vector({2})})[0], b.positions_along(3, 2, n.boxes)})[0];
  Value* added = b.emit("And", {one_hot, b.emit("Unsqueeze", {keep, b.i64_vector({2})})[0]})[0];
  Value* next_kept = b.emit("Or", {kept, added})[0];
  Value* next_count = b.emit("Add", {count, b.cast(keep, DType::kI64)})[0];
  body->set_outputs({next_kept, next_count, keep});
  passes::remove_folded_nodes(*body);

  std::vector<Value*> inputs{kept0, count0, candidates, candidate_scores};
  for (Value* v : s.captured()) inputs.push_back(v);
  graph::Attrs attrs;
  attrs.set("length", n.boxes);
  attrs.set("num_states", int64_t(2));
  attrs.set("num_scan_inputs", int64_t(2));
  graph::Node* scan =
      c.graph.add_node("Scan", c.graph.unique_name(c.name + "/scan"), inputs,
                       {c.graph.unique_name(c.name + "/kept"), c.graph.unique_name(c.name + "/count"),
                        c.graph.unique_name(c.name + "/decided")},
                       std::move(attrs));
  scan->body = body;
  infer_and_fold(*scan, c.fold_constants);
  return scan->outputs[2];  // [N, B, C]
}

void adapt_non_max_suppression(AdaptContext& c) {
  Value* boxes = c.required_input(0, "boxes");
  Value* scores = c.required_input(1, "scores");
  Sizes n{c.static_dim(boxes, 0, "boxes"), c.static_dim(scores, 1, "scores"),
          c.static_dim(boxes, 1, "boxes")};
  TESSEL_USER_CHECK(boxes->type.rank() == 3 && c.static_dim(boxes, 2, "boxes") == 4, c.span())
      << "boxes must be [batches, boxes, 4], got " << boxes->type.str();
  TESSEL_USER_CHECK(scores->type.rank() == 3 && c.static_dim(scores, 0, "scores") == n.batches &&
                        c.static_dim(scores, 2, "scores") == n.boxes,
                    c.span())
      << "scores must be [" << n.batches << ", classes, " << n.boxes << "], got " << scores->type.str();
  bool empty = n.batches == 0 || n.classes == 0 || n.boxes == 0;
  TESSEL_USER_CHECK(empty || n.boxes <= kMaxComparisons / n.boxes / n.batches / n.classes, c.span())
      << "NonMaxSuppression compares every pair of each class's " << n.boxes << " boxes: " << n.batches
      << " batches x " << n.classes << " classes of them are more than " << kMaxComparisons << " comparisons";
  Value* max_input = c.input_or_null(2);
  const Tensor* max_known = max_input ? c.constant_input(2) : nullptr;
  TESSEL_USER_CHECK(!max_known || max_known->numel() == 1, c.span())
      << "max_output_boxes_per_class must hold one value, got " << max_known->type_str();
  int64_t most = max_input ? (max_known ? max_known->get_i64(0) : n.boxes) : 0;
  int64_t bound = empty ? 0 : n.batches * n.classes * std::min(std::max<int64_t>(most, 0), n.boxes);
  if (bound == 0) {
    c.results = std::vector<Value*>{c.constant(Tensor(DType::kI64, {0, 3}))};
    return;
  }
  Value* max_per_class = c.emit("Reshape", {c.cast(max_input, DType::kI64), c.i64_vector({})})[0];
  Value* iou_threshold = c.input_or_null(3) ? c.input_or_null(3) : c.scalar(DType::kF32, 0);
  iou_threshold = c.emit("Reshape", {iou_threshold, c.i64_vector({})})[0];
  Value* score_threshold = c.input_or_null(4);
  if (score_threshold) score_threshold = c.emit("Reshape", {score_threshold, c.i64_vector({})})[0];

  Value* suppresses = suppression(c, boxes, iou_threshold);
  Value* ranked = ranked_boxes(c, scores, n);
  Value* ranked_scores = c.emit("GatherElements", {scores, ranked}, one_attr("axis", int64_t(2)))[0];
  Value* decided = greedy_pass(c, ranked, ranked_scores, suppresses, score_threshold, max_per_class, n);
  Value* kept = c.emit("Reshape",
                       {c.transpose(decided, {1, 2, 0}), c.i64_vector({n.batches * n.classes * n.boxes})})[0];
  Dims each{n.batches, n.classes, n.boxes, 1};
  Value* batch = c.emit("Expand", {c.positions_along(4, 0, n.batches), c.i64_vector(each)})[0];
  Value* klass = c.emit("Expand", {c.positions_along(4, 1, n.classes), c.i64_vector(each)})[0];
  Value* index = c.emit("Unsqueeze", {ranked, c.i64_vector({3})})[0];
  Value* triples = c.emit("Concat", {batch, klass, index}, one_attr("axis", int64_t(3)))[0];
  triples = c.emit("Reshape", {triples, c.i64_vector({n.batches * n.classes * n.boxes, 3})})[0];
  SelectedFirst picked = selected_first(c, kept);
  Value* out = c.emit("Gather", {triples, picked.order}, one_attr("axis", int64_t(0)))[0];
  if (bound < n.batches * n.classes * n.boxes)  // no class keeps more than `most`
    out = c.emit("Slice", {out, c.i64_vector({0}), c.i64_vector({bound}), c.i64_vector({0})})[0];
  c.results = std::vector<Value*>{c.data_dependent(out, 0, picked.count)};
}

}  // namespace

void register_non_max_suppression_adapter(AdapterTable& t) {
  t["NonMaxSuppression"] = adapt_non_max_suppression;
}

}  // namespace tessel::onnx_frontend
