// Opset adapters of the reduce ops: before ReduceSum-13 and before the other
// reductions' version 18, `axes` was an attribute; it becomes input 1.
#include "src/frontend/onnx/adapters.h"

namespace tessel::onnx_frontend {

namespace {

Adapter axes_to_input_before(int opset) {
  return [opset](AdaptContext& c) {
    if (c.opset < opset) c.attr_to_input("axes", 1);
  };
}

}  // namespace

void register_reduce_adapters(AdapterTable& t) {
  t["ReduceSum"] = axes_to_input_before(13);
  for (const char* op : {"ReduceMean", "ReduceProd", "ReduceMax", "ReduceMin", "ReduceL1", "ReduceL2",
                         "ReduceSumSquare", "ReduceLogSum", "ReduceLogSumExp"})
    t[op] = axes_to_input_before(18);
}

}  // namespace tessel::onnx_frontend
