// Structural classification of a freshly lowered block for the default CPU
// schedule: what kind of computation it is (read from its iteration
// variables, its accesses and its body, never from its name), its loops, and
// the axes the per-kind rules tile.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/tensor/function.h"

namespace tessel::sched {

enum class BlockKind {
  kMatmul,       // acc += a * b, no window: MatMul, Gemm, batched matmul
  kConv,         // acc += window(input) * weight, the weight alone indexed by an output channel
  kDepthwise,    // a windowed product whose input is indexed by the output channel too
  kReduction,    // any other reduction (ReduceSum/Max, pooling, softmax and norm stages)
  kElementwise,  // only spatial iteration variables
  kOther,        // none of the above, or a loop nest the rules do not understand: left alone
};
const char* block_kind_name(BlockKind kind);

// A block and its loop nest as lowered: loop l binds exactly one iteration
// variable, spatial loops come before reduction loops, the nest holds only
// this block. Loop positions below index the block's loops (outermost first).
struct BlockInfo {
  std::string name;
  BlockKind kind = BlockKind::kOther;
  std::vector<int64_t> extents;  // per loop
  std::vector<int> spatial;      // loop positions, outermost first
  std::vector<int> reduce;
  // The register-tile axes: the loop whose inner part is vectorized (the
  // innermost spatial loop of extent > 1 whose accesses allow it), and the one
  // whose inner part is unrolled (matmul rows, conv output channels); -1 for none.
  int vector_loop = -1;
  int unroll_loop = -1;
  // Whether every load but the accumulator's reads the vector loop in order
  // (or not at all): a matrix-vector product whose weight rows run along the
  // reduction (a 1x1 conv over a 1x1 plane) reads them a row apart per lane.
  bool vector_in_order = true;
  // A conv vectorized along its output channels (channels-last), its rows
  // the output positions.
  bool channels_in_lanes = false;
  // With channels_in_lanes: the input is read at the output channel too (a
  // depthwise conv computed channels-last), so a channel tile reads only its
  // channels of the input.
  bool input_per_channel = false;
  tir::Buffer output;        // the (first) buffer the block writes
  int64_t iterations = 1;    // product of the loop extents
  int64_t ops_per_iter = 1;  // arithmetic nodes of the body, at least 1
  // Bytes the block moves: per buffer it reads or writes, the smaller of the
  // buffer and one element per iteration (a slice reads part of its input, a
  // broadcast operand is read whole once).
  int64_t bytes = 0;
};

// The block named `name` of func classified. kOther when the nest is not in
// the lowered form described above.
BlockInfo classify_block(const tir::PrimFunc& func, const std::string& name);

// The blocks of func (not the root) classified, in program order.
std::vector<BlockInfo> classify_blocks(const tir::PrimFunc& func);

}  // namespace tessel::sched
