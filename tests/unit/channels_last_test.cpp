// Activations stored channels-last between kernels: which values
// store_channels_last picks (the regions a depthwise conv reads, bounded by
// ops that read planes), and, compiled, that every conv form and the ops
// around it compute the reference through the stored order, kernel by
// kernel, with the depthwise conv's channels in the vector lanes.
#include <gtest/gtest.h>

#include <algorithm>
#include <regex>
#include <sstream>

#include "ir/graph/printer.h"
#include "ir/graph/verifier.h"
#include "ir/tensor/printer.h"
#include "schedules/defaults/block_kind.h"
#include "src/codegen/target.h"
#include "src/driver/check_job.h"
#include "src/driver/compile_model.h"
#include "src/driver/run_inputs.h"
#include "src/passes/channels_last.h"
#include "src/reference/executor.h"
#include "tests/unit/graph_build_util.h"

namespace tessel {
namespace {

using passes::ChannelsLastPolicy;

const std::vector<int64_t> kNhwc = {0, 2, 3, 1};

graph::Value* weight(graph::Graph& g, Dims shape, float scale) {
  Tensor w(DType::kF32, shape);
  for (int64_t e = 0; e < w.numel(); ++e) w.data<float>()[e] = (float(e % 11) - 5) * scale;
  return g.add_constant(g.unique_name("w"), std::move(w));
}

// A conv of `m` output channels over v: k x k, pad k / 2, `group` groups.
graph::Value* conv(graph::Graph& g, graph::Value* v, int64_t m, int64_t k, int64_t group = 1,
                   int64_t stride = 1) {
  int64_t c = v->type.static_dims()[1];
  graph::Attrs attrs;
  attrs.set("pads", std::vector<int64_t>(4, k / 2));
  attrs.set("strides", std::vector<int64_t>{stride, stride});
  attrs.set("group", group);
  Tensor bias(DType::kF32, {m});
  for (int64_t i = 0; i < m; ++i) bias.data<float>()[i] = float(i % 3) / 4;
  graph::Value* b = g.add_constant(g.unique_name("b"), std::move(bias));
  return add(g, "Conv", {v, weight(g, {m, c / group, k, k}, 0.5f / float(c / group * k * k)), b}, attrs)
      ->outputs[0];
}

graph::Value* relu(graph::Graph& g, graph::Value* v) {
  return add(g, "Relu", {v})->outputs[0];
}

// An inverted residual block over a 7 x 7 plane: 1x1 expand, depthwise k x k,
// squeeze-excite (global pool, two 1x1 convs, sigmoid, scale), 1x1 project,
// plus the input; the model's output its global average.
struct Block {
  graph::Graph g;
  graph::Value *x, *stem, *expanded, *depthwise, *pooled, *scaled, *projected, *sum, *y, *out;

  explicit Block(int64_t k = 3, int64_t plane = 7, int64_t wide = 64) {
    x = g.add_input("x", graph::TensorType(DType::kF32, {1, 16, plane, plane}));
    stem = relu(g, conv(g, x, 16, 1));
    expanded = relu(g, conv(g, stem, wide, 1));
    depthwise = relu(g, conv(g, expanded, wide, k, /*group=*/wide));
    pooled = add(g, "GlobalAveragePool", {depthwise})->outputs[0];
    graph::Value* scale = add(g, "Sigmoid", {conv(g, relu(g, conv(g, pooled, 16, 1)), wide, 1)})->outputs[0];
    scaled = add(g, "Mul", {depthwise, scale})->outputs[0];
    projected = conv(g, scaled, 16, 1);
    sum = add(g, "Add", {projected, stem})->outputs[0];
    y = relu(g, sum);
    out = add(g, "GlobalAveragePool", {y})->outputs[0];
    g.set_outputs({out});
  }
};

bool stored(const graph::Value* v) {
  return v->storage == kNhwc;
}

TEST(ChannelsLast, ADepthwiseRegionIsStoredChannelsLast) {
  Block b;
  passes::store_channels_last(b.g, ChannelsLastPolicy::kDepthwise, 16);
  EXPECT_NO_THROW(graph::verify_graph(b.g));
  for (graph::Value* v : {b.stem, b.expanded, b.depthwise, b.scaled, b.projected, b.sum, b.y})
    EXPECT_TRUE(stored(v)) << v->name;
  EXPECT_TRUE(b.x->storage.empty() && b.out->storage.empty())
      << "the model's input and output keep their layout";
  EXPECT_TRUE(b.pooled->storage.empty()) << "a 1 x 1 plane is in the same order either way";
  // A graph output in the region: everything tied to it through elementwise
  // ops keeps the type's order (the residual chain), the rest does not.
  Block last;
  last.g.set_outputs({last.y});
  passes::store_channels_last(last.g, ChannelsLastPolicy::kDepthwise, 16);
  EXPECT_FALSE(stored(last.y) || stored(last.sum) || stored(last.projected) || stored(last.stem));
  EXPECT_TRUE(stored(last.expanded) && stored(last.depthwise) && stored(last.scaled));
  // Whatever the rows: 14 on 8 or 16 lanes, 112 on 8.
  for (auto [plane, lanes] : {std::pair<int64_t, int64_t>{14, 16}, {14, 8}, {112, 8}}) {
    Block wide(3, plane);
    passes::store_channels_last(wide.g, ChannelsLastPolicy::kDepthwise, lanes);
    for (graph::Value* v : {wide.stem, wide.expanded, wide.depthwise, wide.scaled, wide.y})
      EXPECT_TRUE(stored(v)) << v->name << " of a " << plane << " x " << plane << " plane on " << lanes << " lanes";
  }
  // Output channels that are not whole vectors (64 on 128 lanes): the convs
  // are not computed channels-last, and nothing is stored so.
  Block partial;
  passes::store_channels_last(partial.g, ChannelsLastPolicy::kDepthwise, 128);
  for (const graph::Value* v : partial.g.values()) EXPECT_TRUE(v->storage.empty()) << v->name;
}

// A depthwise conv's input and output are stored together: per channel over
// a plain input, it would write a channels-last output a plane apart per
// channel.
TEST(ChannelsLast, ADepthwiseConvsInputAndOutputAreStoredTogether) {
  graph::Graph g;
  graph::Value* x = g.add_input("x", graph::TensorType(DType::kF32, {1, 32, 7, 7}));
  graph::Value* depthwise = relu(g, conv(g, x, 32, 3, /*group=*/32));
  graph::Value* y = relu(g, conv(g, depthwise, 32, 1));
  g.set_outputs({add(g, "GlobalAveragePool", {y})->outputs[0]});
  passes::store_channels_last(g, ChannelsLastPolicy::kAll, 16);
  EXPECT_FALSE(stored(depthwise)) << "its input is the model's";
  EXPECT_TRUE(stored(y));
}

// A value read by an op that reads planes (a max pool) stays as typed, and so
// does everything tied to it through an elementwise op; a region without a
// depthwise conv is stored only under kAll.
TEST(ChannelsLast, OpsThatReadPlanesBoundTheRegions) {
  graph::Graph g;
  graph::Value* x = g.add_input("x", graph::TensorType(DType::kF32, {1, 16, 7, 7}));
  graph::Value* a = relu(g, conv(g, x, 16, 3));
  graph::Value* b = relu(g, conv(g, a, 16, 3));
  graph::Value* sum = add(g, "Add", {a, b})->outputs[0];
  graph::Attrs pool;
  pool.set("kernel_shape", std::vector<int64_t>{3, 3});
  pool.set("pads", std::vector<int64_t>{1, 1, 1, 1});
  graph::Value* pooled = add(g, "MaxPool", {sum}, pool)->outputs[0];
  graph::Value* c = relu(g, conv(g, pooled, 16, 3));
  graph::Value* y = relu(g, conv(g, c, 16, 3));
  g.set_outputs({y});
  passes::store_channels_last(g, ChannelsLastPolicy::kDepthwise, 16);
  for (const graph::Value* v : g.values())
    EXPECT_TRUE(v->storage.empty()) << v->name << ": no depthwise conv";
  passes::store_channels_last(g, ChannelsLastPolicy::kAll, 16);
  EXPECT_FALSE(stored(sum)) << "read by the pool";
  EXPECT_FALSE(stored(a) || stored(b)) << "tied to the sum by the Add";
  EXPECT_FALSE(stored(pooled)) << "written by the pool";
  EXPECT_TRUE(stored(c));
  EXPECT_FALSE(stored(y)) << "the graph's output";
  EXPECT_NO_THROW(graph::verify_graph(g));
}

// permuted: {0, 2, 3, 1} takes NCHW to NHWC, and its inverse back.
TEST(ChannelsLast, ATensorPermutedToItsStorageOrderAndBack) {
  Tensor t(DType::kF32, {1, 3, 2, 2});
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = float(i);
  Tensor nhwc = t.permuted(kNhwc);
  EXPECT_EQ(nhwc.shape(), (Dims{1, 2, 2, 3}));
  // NHWC[0, h, w, c] = NCHW[0, c, h, w]: position (1, 0) holds channel c at c * 4 + 2.
  EXPECT_EQ(nhwc.data<float>()[(1 * 2 + 0) * 3 + 2], 2 * 4 + 2);
  Tensor back = nhwc.permuted({0, 3, 1, 2});
  for (int64_t i = 0; i < t.numel(); ++i) EXPECT_EQ(back.data<float>()[i], float(i));
}

driver::CompileOptions with_policy(ChannelsLastPolicy policy) {
  driver::CompileOptions o;
  o.channels_last = policy;
  return o;
}

// Compiled for this CPU with every region stored channels-last (any row
// width, so on any vector width): a 3x3 conv
// (stride 1 and 2), 1x1 convs, a grouped conv, depthwise convs (3x3, 5x5,
// stride 2), the squeeze-excite scale and a residual sum compute the reference,
// output by output and kernel by kernel (each kernel run on the reference's
// inputs put in its stored order).
TEST(ChannelsLast, EveryConvFormComputesTheReferenceThroughTheStoredOrder) {
  for (int64_t k : {3, 5}) {
    SCOPED_TRACE(k);
    Block b(k, 7);
    graph::Value* wide = relu(b.g, conv(b.g, b.y, 32, 3));  // the block's sum read by a 3x3 conv too
    graph::Value* grouped = relu(b.g, conv(b.g, wide, 32, 3, /*group=*/4));
    graph::Value* strided = relu(b.g, conv(b.g, grouped, 32, 3, /*group=*/32, /*stride=*/2));
    graph::Value* dense = relu(b.g, conv(b.g, strided, 16, 3, 1, /*stride=*/2));
    b.g.set_outputs({b.out, add(b.g, "GlobalAveragePool", {dense})->outputs[0]});
    driver::CheckOptions check;
    check.compile = with_policy(ChannelsLastPolicy::kAll);
    check.per_kernel = true;
    std::ostringstream report;
    EXPECT_EQ(driver::run_check(b.g, check, report), 0) << report.str();
    int stored_values = 0;
    for (const graph::Value* v : b.g.values()) stored_values += stored(v);
    EXPECT_GE(stored_values, 8) << graph::print_graph(b.g);
  }
}

// The compiled model's largest relative error against the reference
// executor on random inputs drawn from `seed`.
double max_rel_error(const graph::Graph& g, driver::JitModel& model, uint64_t seed) {
  std::vector<Tensor> inputs = driver::random_inputs(g, seed);
  Tensor want = reference::Executor(g).run(inputs)[0], got = model.run(inputs)[0];
  return driver::error_stats(got, want).max_rel;
}

// The register tiles a kernel's text allocates ("alloc Conv: f32[1, rows,
// columns]"), as {rows, columns}.
std::vector<std::pair<int64_t, int64_t>> register_tiles(const std::string& text) {
  static const std::regex tile(R"(alloc \S+: f32\[1, (\d+), (\d+)\])");
  std::vector<std::pair<int64_t, int64_t>> out;
  for (std::sregex_iterator m(text.begin(), text.end(), tile), end; m != end; ++m)
    out.emplace_back(std::stoll((*m)[1]), std::stoll((*m)[2]));
  return out;
}

// The depthwise conv over a channels-last input: a conv block whose rows are
// output positions and whose vector is the channels, reading its input's
// padded copy stored channels-last, made per channel tile inside the tile's
// parallel loop (a slice of the tile's channels, not a pass over the whole
// input); the 1x1 conv after it a contraction over the channels (not a
// reduction the schedule cannot tile).
TEST(ChannelsLast, ADepthwiseConvIsComputedWithItsChannelsInTheVectorLanes) {
  const int64_t wide = 96;  // channels: 12 AVX2 vectors, 6 AVX-512 ones
  Block b(3, 7, wide);
  driver::CompileOptions options = with_policy(ChannelsLastPolicy::kAll);  // any lanes
  options.target.cpu.min_parallel_cycles = 1;  // the tile loop parallel, as in a full-size model
  driver::JitModel model(driver::compile_graph(b.g, options));
  bool found_depthwise = false, found_project = false, found_tile = false;
  int64_t lanes = options.target.cpu.vector_bits / 32;
  for (const driver::CompiledKernel& kernel : model.compiled_kernels()) {
    std::string text = tir::to_string(kernel.group.func);
    for (const sched::BlockInfo& info : sched::classify_blocks(kernel.group.func)) {
      if (info.kind == sched::BlockKind::kReduction && info.reduce.size() == 1 &&
          info.extents[size_t(info.reduce[0])] == wide)
        ADD_FAILURE() << "a 1x1 conv over " << wide << " channels read as a reduction:\n" << text;
      // The 49 positions, padded to whole register tiles (how many rows a
      // tile has depends on the CPU's vector registers).
      if (!info.output.defined() || info.output->shape.size() != 3 || info.output->shape[1] < 49 ||
          info.output->shape[2] != wide)
        continue;
      std::smatch copy;  // the padded copy, channels-last: rows below for the padding positions
      const std::regex padded_copy(R"(f32\[1, \d+, 9, )" + std::to_string(wide) + R"(\])");
      if (!std::regex_search(text, copy, padded_copy)) continue;
      found_depthwise = true;
      EXPECT_EQ(info.kind, sched::BlockKind::kConv) << text;
      EXPECT_TRUE(info.channels_in_lanes && info.input_per_channel);
      EXPECT_EQ(info.extents[size_t(info.unroll_loop)], info.output->shape[1]);
      EXPECT_EQ(info.extents[size_t(info.vector_loop)], wide);
      std::string scheduled = tir::to_string(kernel.flat);
      std::istringstream lines(scheduled);
      bool inside_parallel = false, copy_inside = false;
      for (std::string line; std::getline(lines, line);) {
        inside_parallel = inside_parallel || line.find("parallel:") != std::string::npos;
        bool copy = line.find("alloc ") != std::string::npos && line.find("_pad") != std::string::npos;
        copy_inside = copy_inside || (copy && inside_parallel);
      }
      EXPECT_TRUE(copy_inside) << "the padded slice is made inside the parallel channel-tile loop:\n"
                               << scheduled;
      EXPECT_EQ(scheduled.find(copy.str()), std::string::npos) << "a slice of the channels:\n" << scheduled;
      // Its register tile: two vectors of channels, the accumulators in half
      // the vector registers (the input's vectors take the rest).
      for (auto [rows, columns] : register_tiles(scheduled)) {
        if (columns != 2 * lanes) continue;
        found_tile = true;
        EXPECT_LE(rows * 2, (lanes >= 16 ? 32 : 16) / 2) << scheduled;
      }
    }
    found_project = found_project || text.find("f32[1, 7, 7, " + std::to_string(wide) + "]") != std::string::npos;
  }
  EXPECT_TRUE(found_depthwise && found_project);
  EXPECT_TRUE(found_tile) << "no tile of two vectors of channels";
  EXPECT_LE(max_rel_error(b.g, model, 7), 1e-5);
}

// The squeeze-excite scale sigmoid(s[c]), read at every position of a
// channels-last value (channel innermost), is computed once per channel in
// a block of its own; read by a value stored as typed (channel loop
// outside), it stays inlined. The buffer a line containing the sigmoid
// stores to names which.
std::vector<std::string> sigmoid_targets(const driver::JitModel& model) {
  std::vector<std::string> targets;
  for (const driver::CompiledKernel& kernel : model.compiled_kernels()) {
    std::istringstream lines(tir::to_string(kernel.flat));
    for (std::string line; std::getline(lines, line);) {
      size_t at = line.find("sigmoid(");
      if (at == std::string::npos) continue;
      size_t first = line.find_first_not_of(' ');
      targets.push_back(line.substr(first, line.find('[') - first));
    }
  }
  return targets;
}

TEST(ChannelsLast, AScaleReadAtEveryPositionIsComputedOncePerChannel) {
  for (ChannelsLastPolicy policy : {ChannelsLastPolicy::kDepthwise, ChannelsLastPolicy::kNone}) {
    SCOPED_TRACE(passes::channels_last_policy_name(policy));
    Block b(3, 14);
    driver::JitModel model(driver::compile_graph(b.g, with_policy(policy)));
    std::vector<std::string> targets = sigmoid_targets(model);
    ASSERT_EQ(targets.size(), 1u);
    std::string buffers;
    for (const driver::CompiledKernel& kernel : model.compiled_kernels()) buffers += tir::to_string(kernel.flat);
    bool per_channel = buffers.find("alloc " + targets[0] + ": f32[1, 64, 1, 1]") != std::string::npos;
    EXPECT_EQ(per_channel, policy == ChannelsLastPolicy::kDepthwise) << targets[0] << " in\n" << buffers;
    EXPECT_LE(max_rel_error(b.g, model, 3), 1e-5);
  }
}

// A 1x1 conv computed channels-last whose output channels are an odd number
// of vectors (five) takes tiles of one vector: as many rows as divide its
// positions and fit, each an accumulator of its own (7 of 196 positions,
// not 4: with four the FMAs waited on each other's latency).
TEST(ChannelsLast, AOneVectorTileTakesTheMostRowsThatDivideThePositions) {
  int64_t lanes = codegen::host_target().cpu.vector_bits / 32;
  Block b(3, 14, 5 * lanes);
  driver::JitModel model(driver::compile_graph(b.g, with_policy(ChannelsLastPolicy::kDepthwise)));
  int tiles = 0;
  for (const driver::CompiledKernel& kernel : model.compiled_kernels()) {
    std::string text = tir::to_string(kernel.flat);
    for (auto [rows, columns] : register_tiles(text)) {
      if (columns != lanes || rows == 1) continue;
      ++tiles;
      EXPECT_EQ(196 % rows, 0) << text;
      EXPECT_GE(rows, 7) << text;
    }
  }
  EXPECT_GE(tiles, 1);
  EXPECT_LE(max_rel_error(b.g, model, 5), 1e-5);
}

// The squeeze-excite pooling over a channels-last value sums the positions
// of each vector of channels: its tile is several vectors wide (independent
// chains of adds), one for each thread at least.
TEST(ChannelsLast, APoolingOverChannelsLastPositionsSumsSeveralVectorsAtOnce) {
  int64_t lanes = codegen::host_target().cpu.vector_bits / 32;
  Block b(3, 14, 8 * lanes);
  driver::CompileOptions options = with_policy(ChannelsLastPolicy::kDepthwise);
  options.target.cpu.min_parallel_cycles = 1;
  driver::JitModel model(driver::compile_graph(b.g, options));
  const std::string input = "f32[1, 14, 14, " + std::to_string(8 * lanes) + "]";
  static const std::regex vector_loop(R"(in 0\.\.(\d+) vectorized)");
  int pools = 0;
  for (const driver::CompiledKernel& kernel : model.compiled_kernels()) {
    std::string text = tir::to_string(kernel.flat);
    if (text.rfind("func GlobalAveragePool", 0) != 0 || text.find(input) == std::string::npos) continue;
    ++pools;
    // The vector loop inside the loops over the positions (k...), not the
    // division by their count after them.
    std::smatch m;
    std::string summing = text.substr(text.find("for k"));
    ASSERT_TRUE(std::regex_search(summing, m, vector_loop)) << text;
    EXPECT_GE(std::stoll(m[1]), 2 * lanes) << text;
  }
  EXPECT_EQ(pools, 1);
  EXPECT_LE(max_rel_error(b.g, model, 9), 1e-5);
}

graph::Value* cast(graph::Graph& g, graph::Value* v, DType to) {
  graph::Attrs attrs;
  attrs.set("to", std::string(dtype_name(to)));
  return add(g, "Cast", {v}, attrs)->outputs[0];
}

graph::Value* f64_scalar(graph::Graph& g, double value) {
  Tensor t(DType::kF64, {});
  t.set_f64(0, value);
  return g.add_constant(g.unique_name("c"), std::move(t));
}

// A quantized model's convs, as --qdq integer imports them: the exact sums
// requantized in f64, rounded, clipped and cast to uint8, converted back to
// f32 for the next conv. The region runs through every dtype and Cast, so
// the depthwise conv's output is requantized in its stored order (no
// transposing epilogue) and the 1x1 conv after it reads it in order.
TEST(ChannelsLast, ARegionRunsThroughTheRequantizationOfAQuantizedConv) {
  graph::Graph g;
  graph::Value* x = g.add_input("x", graph::TensorType(DType::kF32, {1, 16, 7, 7}));
  auto requantized = [&](graph::Value* sum) {
    graph::Value* scaled = add(g, "Mul", {cast(g, sum, DType::kF64), f64_scalar(g, 0.37)})->outputs[0];
    graph::Value* rounded = add(g, "Round", {scaled})->outputs[0];
    graph::Value* clipped = add(g, "Clip", {rounded, f64_scalar(g, 0), f64_scalar(g, 255)})->outputs[0];
    return std::vector<graph::Value*>{scaled, clipped, cast(g, clipped, DType::kU8)};
  };
  std::vector<graph::Value*> first = requantized(conv(g, x, 32, 1));
  graph::Value* dequantized = cast(g, first.back(), DType::kF32);
  graph::Value* depthwise = conv(g, dequantized, 32, 3, /*group=*/32);
  std::vector<graph::Value*> second = requantized(depthwise);
  graph::Value* projected = conv(g, cast(g, second.back(), DType::kF32), 16, 1);
  g.set_outputs({add(g, "GlobalAveragePool", {projected})->outputs[0]});
  passes::store_channels_last(g, ChannelsLastPolicy::kDepthwise, 16);
  EXPECT_NO_THROW(graph::verify_graph(g));
  for (const std::vector<graph::Value*>& chain : {first, second})
    for (const graph::Value* v : chain) EXPECT_TRUE(stored(v)) << v->name << ": " << v->type.str();
  EXPECT_TRUE(stored(dequantized) && stored(depthwise) && stored(projected));
  driver::CheckOptions check;
  check.compile = with_policy(ChannelsLastPolicy::kAll);
  check.per_kernel = true;
  std::ostringstream report;
  EXPECT_EQ(driver::run_check(g, check, report), 0) << report.str();
}

}  // namespace
}  // namespace tessel
