// Scan: the one control-flow op of the graph IR. Its body, a graph of its
// own, runs `length` times; each run reads the loop-carried states, slice t of
// every scan input along axis 0 and the captured values, and yields the next
// states and slice t of every scan output. Recurrent nets (LSTM, GRU, RNN)
// and ONNX's Scan import to it; the compiled plan runs the body's kernels in
// a loop, the runtime copying states and slices between iterations.
//
//   %h_last, %ys = Scan(%h0, %xs, %r) {length = 5, num_states = 1, num_scan_inputs = 1}
//     body(%h: f32[1, 4], %x: f32[1, 4], %r: f32[4, 4]) { ... return %h_next, %y }
//
// Node inputs:  states (num_states), scan inputs (num_scan_inputs), captures.
// Body inputs:  the same, each scan input without its axis 0.
// Body outputs: next states (num_states), then scan outputs slices.
// Node outputs: final states, then each scan output stacked along a new axis 0.
//
// run_when 1 (or -1) makes it an If's branch: it runs its one iteration only
// when its last input, a captured bool scalar, is true (false); otherwise
// its outputs are its initial states. Such a Scan has no scan outputs.
//
// while_state s (a bool scalar state) makes it a while loop: before each
// iteration it ends when state s is false, so `length` only bounds it. Slices
// of its scan outputs past the iterations that ran hold nothing defined.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "ir/graph/graph.h"

namespace tessel::graph {

struct ScanLayout {
  int64_t length = 0;
  size_t num_states = 0, num_scan_inputs = 0, num_captures = 0, num_scan_outputs = 0;
  // Per scan input / output: whether iteration t reads or writes slice length - 1 - t.
  std::vector<bool> reverse_inputs, reverse_outputs;
  int run_when = 0;  // 0: always; 1 or -1: when the last input is true or false
  int64_t while_state = -1;  // the state that ends the loop when false; -1: none

  // Whether the body runs at all, given the condition's value (when run_when != 0).
  bool runs(bool condition) const { return run_when == 0 || condition == (run_when > 0); }

  size_t scan_input(size_t k) const { return num_states + k; }
  size_t capture(size_t k) const { return num_states + num_scan_inputs + k; }
  size_t scan_output(size_t k) const { return num_states + k; }
  // The slice of a scan input or output that iteration t touches.
  int64_t input_slice(size_t k, int64_t t) const { return reverse_inputs[k] ? length - 1 - t : t; }
  int64_t output_slice(size_t k, int64_t t) const { return reverse_outputs[k] ? length - 1 - t : t; }
};

// The layout of a validated Scan node (its attributes and its body's arity).
ScanLayout scan_layout(const Node& scan);

// fn on g, then on every Scan body in it, depth first: a graph pass that
// applies to bodies as to the model's graph.
void for_each_graph(Graph& g, const std::function<void(Graph&)>& fn);
// Whether g holds a Scan (bodies exist only inside one).
bool has_scan(const Graph& g);

// A body that returns one state input as another's next state (swaps them)
// would have the copies that carry states overwrite what a later copy reads;
// each such output becomes an Identity of the input, a value of its own.
void separate_swapped_states(Graph& g);

}  // namespace tessel::graph
