// Decision-tree ensembles (ai.onnx.ml TreeEnsemble, TreeEnsembleRegressor,
// TreeEnsembleClassifier) as tensor ops, with Hummingbird's two strategies:
// shallow trees by matrix products (every split compared at once, each
// tree's leaf found by a batched product of the split outcomes with a +1/-1
// path matrix, the leaves' votes summed by another product), deep ones by a
// walk of gathers, one level per step. No per-sample control flow, so the
// compiled model is the graph IR's ordinary kernels.
#pragma once

#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "src/frontend/onnx/adapters.h"

namespace tessel::onnx_frontend {

enum class SplitMode { kLeq, kLt, kGte, kGt, kEq, kNeq, kMember };
enum class TreeAggregate { kAverage, kSum, kMin, kMax };
enum class TreePostTransform { kNone, kSoftmax, kLogistic };

struct TreeSplit {
  int64_t feature = 0;
  SplitMode mode = SplitMode::kLeq;
  double value = 0;                // the threshold (not kMember)
  std::vector<double> members;     // kMember: the set the feature must be in
  bool missing_goes_true = false;  // a NaN feature takes the true branch
};

struct TreeVote {
  int64_t target = 0;
  double weight = 0;
};

// One root-to-leaf path: the splits on it and the branch taken at each.
struct TreeLeaf {
  int64_t tree = 0;
  std::vector<std::pair<int64_t, bool>> steps;  // (index into splits, took the true branch)
  std::vector<TreeVote> votes;
};

struct TreeModel {
  std::vector<TreeSplit> splits;
  std::vector<TreeLeaf> leaves;  // grouped by tree, trees numbered 0..trees-1
  int64_t trees = 0;
  int64_t targets = 0;
  TreeAggregate aggregate = TreeAggregate::kSum;
  TreePostTransform post = TreePostTransform::kNone;
  std::vector<double> base_values;  // empty, or one per target
};

// Follows a tree from `root` through true/false child links (the caller's
// tables) and appends one TreeLeaf per path. child(node, branch) gives the
// next node and whether it is a leaf; split_of(node) the split's index. A
// cycle or a path longer than `max_depth` is a user error.
struct TreeWalker {
  int64_t max_depth = 0;
  std::function<std::pair<int64_t, bool>(int64_t node, bool branch)> child;
  std::function<int64_t(int64_t node)> split_of;
  std::function<std::vector<TreeVote>(int64_t leaf)> votes;
  void walk(AdaptContext& c, int64_t tree, int64_t root, bool root_is_leaf, TreeModel& m) const;
};

// Y [N, targets] of type `out` from x [N, features]; computed in f64 when
// `out` is f64, in f32 otherwise. Shallow trees (and set membership) run as
// path-matrix products, deeper ones as a walk (traverse_tree_ensemble).
graph::Value* compose_tree_ensemble(AdaptContext& c, graph::Value* x, const TreeModel& m, DType out);

// The walk: [N, targets] aggregated (no base values, no post transform) in
// `dtype`, x already of that type; no set-membership splits.
graph::Value* traverse_tree_ensemble(AdaptContext& c, graph::Value* x, const TreeModel& m, DType dtype);
// What a target no reached leaf votes for aggregates to: the type's largest
// value for MIN, its lowest for MAX, 0 for SUM and AVERAGE.
double aggregate_start(const TreeModel& m, DType dtype);
// A split's comparison of x with its threshold (not kMember).
graph::Value* compare_split(AdaptContext& c, SplitMode mode, graph::Value* x, graph::Value* threshold);

}  // namespace tessel::onnx_frontend
