// How fast the tuner's features are extracted: every kernel of a model,
// scheduled by the default schedule and flattened, extracted over and over
// on one thread for about two seconds; prints kernels (candidates) per second.
//
//   build/bench/tessel_feature_bench MODEL.onnx [--input-shape NAME=DxD...]
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "src/driver/compile_model.h"
#include "src/driver/pipeline.h"
#include "tessel/error.h"
#include "tuner/features/features.h"

int main(int argc, char** argv) {
  using namespace tessel;
  if (argc < 2) {
    std::fprintf(stderr, "usage: tessel_feature_bench MODEL.onnx [--input-shape NAME=DxD ...]\n");
    return 2;
  }
  try {
    driver::PipelineOptions pipeline;
    for (int i = 2; i + 1 < argc; i += 2)
      if (std::string(argv[i]) == "--input-shape") pipeline.import.input_shapes.insert(driver::parse_input_shape(argv[i + 1]));
    graph::Graph g = driver::load_graph(argv[1], pipeline);
    driver::CompiledGraph compiled = driver::compile_graph(g, driver::CompileOptions{});
    std::vector<tir::PrimFunc> candidates;
    for (const driver::CompiledKernel& k : compiled.kernels) candidates.push_back(k.flat);
    size_t extracted = 0;
    double checksum = 0;
    auto start = std::chrono::steady_clock::now();
    double seconds = 0;
    while (seconds < 2.0) {
      for (const tir::PrimFunc& f : candidates) checksum += tune::extract_features(f)[0];
      extracted += candidates.size();
      seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }
    std::printf("%s: %zu kernels, %zu features each; %.0f candidates per second on one thread (checksum %.1f)\n",
                argv[1], candidates.size(), tune::feature_count(), double(extracted) / seconds, checksum);
    return 0;
  } catch (const UserError& e) {
    std::fprintf(stderr, "tessel_feature_bench: %s\n", e.what());
    return 2;
  }
}
