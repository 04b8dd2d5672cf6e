// How values of data-dependent extent (RuntimeExtent: NonZero's, Compress's,
// NonMaxSuppression's outputs) flow through the ops after them. Such a value
// is computed at its upper bound, the data first along its axis; an op may
// read it when every entry of its result along one axis comes from the entry
// at the same position of that input (elementwise ops, Transpose, Reshape's
// that keep the axis, Gather, Slice and Concat along other axes, MatMul's
// rows, reductions over other axes), so that its result's first entries are
// the data again. Any other op would mix padding into the data, and is refused
// with the reason. This is XLA's bounded dynamic padding, kept to the ops that
// need no masks.
#pragma once

#include <vector>

#include "src/frontend/onnx/adapters.h"

namespace tessel::onnx_frontend {

// Before the adapter of a node that reads such a value: indices read from the
// padding are made 0, so that Gather's run-time range check never fires on
// padding the user's arithmetic turned out of range.
void prepare_runtime_extents(AdaptContext& c, const RuntimeExtents& extents);

// After it: the extent its first result carries, from `inputs` and `attrs`
// (the node as ONNX wrote it, before its adapter changed them), or a
// UserError naming the value, the node that decided its extent and why this
// op cannot read it. Shape and Size of such a value become values computed at
// run time (results[0] is replaced).
void carry_runtime_extents(AdaptContext& c, const std::vector<graph::Value*>& inputs,
                           const graph::Attrs& attrs, std::vector<graph::Value*>& results,
                           RuntimeExtents& extents);

}  // namespace tessel::onnx_frontend
