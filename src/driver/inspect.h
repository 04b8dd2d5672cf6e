// `tessel inspect`: what a model is made of — op histogram, inputs and
// outputs, parameters, and FLOPs per node and in total.
#pragma once

#include <ostream>

#include "ir/graph/graph.h"

namespace tessel::driver {

struct ModelSummary {
  int64_t parameters = 0;       // elements of all constants
  int64_t parameter_bytes = 0;
  int64_t flops = 0;            // sum over nodes with a FLOP count
};

ModelSummary summarize(const graph::Graph& g);
void print_inspection(const graph::Graph& g, std::ostream& out);
// The graph IR as text (graph::print_graph).
std::string graph_text(const graph::Graph& g);
// `tessel ops`: the supported ONNX operators as Markdown (onnx_frontend::ops_markdown).
std::string supported_ops_report();

}  // namespace tessel::driver
