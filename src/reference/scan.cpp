// run_scan: slices along axis 0 are contiguous, so iteration t reads and
// writes whole byte ranges of the stacked tensors.
#include "src/reference/scan.h"

#include <cstring>

#include "ir/graph/scan.h"
#include "src/reference/executor.h"
#include "src/reference/kernel_registry.h"

namespace tessel::reference {

namespace {

Tensor slice_of(const Tensor& stacked, int64_t index) {
  Dims shape(stacked.shape().begin() + 1, stacked.shape().end());
  Tensor slice(stacked.dtype(), shape);
  const auto* base = static_cast<const uint8_t*>(stacked.raw());
  if (slice.nbytes()) std::memcpy(slice.raw(), base + size_t(index) * slice.nbytes(), slice.nbytes());
  return slice;
}

void store_slice(Tensor& stacked, int64_t index, const Tensor& slice) {
  auto* base = static_cast<uint8_t*>(stacked.raw());
  if (slice.nbytes()) std::memcpy(base + size_t(index) * slice.nbytes(), slice.raw(), slice.nbytes());
}

}  // namespace

std::vector<Tensor> run_scan(const graph::Node& scan, const std::vector<const Tensor*>& inputs,
                             const BodyRunner& run_body) {
  graph::ScanLayout l = graph::scan_layout(scan);
  std::vector<Tensor> states;
  for (size_t j = 0; j < l.num_states; ++j) states.push_back(*inputs[j]);
  std::vector<Tensor> stacked;
  if (l.run_when != 0 && !l.runs(inputs.back()->get_f64(0) != 0)) return states;
  for (size_t k = 0; k < l.num_scan_outputs; ++k) {
    const graph::TensorType& t = scan.outputs[l.scan_output(k)]->type;
    stacked.emplace_back(t.dtype, t.static_dims());
  }
  for (int64_t t = 0; t < l.length; ++t) {
    if (l.while_state >= 0 && states[size_t(l.while_state)].get_f64(0) == 0) break;
    std::vector<Tensor> args = states;
    for (size_t k = 0; k < l.num_scan_inputs; ++k)
      args.push_back(slice_of(*inputs[l.scan_input(k)], l.input_slice(k, t)));
    for (size_t k = 0; k < l.num_captures; ++k) args.push_back(*inputs[l.capture(k)]);
    std::vector<Tensor> results = run_body(args);
    for (size_t j = 0; j < l.num_states; ++j) states[j] = std::move(results[j]);
    for (size_t k = 0; k < l.num_scan_outputs; ++k)
      store_slice(stacked[k], l.output_slice(k, t), results[l.scan_output(k)]);
  }
  for (Tensor& s : stacked) states.push_back(std::move(s));
  return states;
}

namespace kernels {

void register_control(KernelRegistry& r) {
  r.add("Scan",
        [](const graph::Node& node, const std::vector<const Tensor*>& inputs, std::vector<Tensor>& outputs) {
          Executor body(*node.body);
          outputs = run_scan(node, inputs, [&](const std::vector<Tensor>& args) { return body.run(args); });
        });
}

}  // namespace kernels

}  // namespace tessel::reference
