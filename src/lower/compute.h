// Compute definitions: the tensor-expression layer between graph ops and the
// tensor IR. A TensorExpr says how to read element `indices` of a value; an
// injective op composes index maps (so it is inlined into its consumer for
// free), and every other stage becomes a named block writing a buffer.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "ir/graph/types.h"
#include "ir/tensor/function.h"
#include "src/lower/layout_choices.h"

namespace tessel::lower {

using IndexFn = std::function<tir::Expr(const std::vector<tir::Expr>& indices)>;

// A value that reads a different operand per range of one axis (a Concat):
// along `axis`, the positions [ends[k - 1], ends[k]) (from 0 for k = 0) read
// only operand k. A block materialising it is one block per range, its value
// simplified on that range, so that no element evaluates the others' branches.
struct AxisParts {
  int axis = -1;  // -1: one part
  std::vector<int64_t> ends;

  bool split() const { return axis >= 0 && ends.size() > 1; }
};

struct TensorExpr {
  std::vector<int64_t> shape;
  DType dtype = DType::kF32;
  IndexFn at;          // the element at indices (one i64 Expr per dimension)
  tir::Buffer buffer;  // set when the value is materialised in a buffer (then `at` loads from it)
  // The trailing dimensions (0 or at least 2) that a block materialising the
  // value iterates as one flat index: the value reads a buffer laid out flat
  // over them (a pointwise conv over the flat plane), and a block over the
  // same flat positions can join that buffer's register tile.
  int flat_tail = 0;
  // With flat_tail: the flat positions from flat_head on read a separate
  // tail (a flat pointwise conv's last positions, fewer than a tile); a
  // kernel output materialising the value is then written by two blocks, so
  // that the first can join the head's register tiles. 0: no tail.
  int64_t flat_head = 0;
  AxisParts parts;
  // A 4-D value read from a buffer over its flat positions with the channels
  // innermost (a channels-last conv's result, Yt[n, h * W + w, c]): a block
  // storing it channels-last iterates (n, h * W + w, c) and reads Yt at its
  // own indices, so the schedule can put it in Yt's register tile.
  bool flat_positions = false;
  // With `buffer`: the order the buffer holds the dimensions in, where it is
  // not the value's own (a channels-last activation, graph::Value::storage);
  // `at` takes the value's indices and permutes them.
  std::vector<int64_t> storage;

  int rank() const { return int(shape.size()); }
};

// A TensorExpr that reads a buffer.
TensorExpr from_buffer(const tir::Buffer& buffer);

enum class Combiner { kSum, kProd, kMax, kMin };
tir::Expr combiner_identity(Combiner c, DType dtype);
tir::Expr combine(Combiner c, tir::Expr acc, tir::Expr value);

// Builds one PrimFunc: parameters, then blocks in the order they are added.
class LowerContext {
 public:
  explicit LowerContext(std::string func_name, LayoutChoices layouts = {});

  // The target's layout decisions (layout_choices.h), for the ops that have them.
  const LayoutChoices& layouts() const { return layouts_; }

  // A parameter buffer for a value computed outside the function, its
  // dimensions stored in the order `storage` gives (empty: as they are).
  TensorExpr input(const std::string& name, DType dtype, const std::vector<int64_t>& shape,
                   const std::vector<int64_t>& storage = {});

  // A block `name` writing a new buffer: out[i...] = value(i...). With
  // flat_tail >= 2, the block iterates the last flat_tail dimensions as one
  // flat index f (out[..., f // W, f % W] = value(..., f // W, f % W), simplified).
  TensorExpr compute(const std::string& name, const std::vector<int64_t>& shape, DType dtype,
                     const IndexFn& value, int flat_tail = 0);

  // compute with the buffer holding the dimensions in the order `storage`
  // lists (empty: as they are), the block iterating them in that order (its
  // stores in sequence); the value reads it with its own indices.
  // With flat_positions, a 4-D value stored channels-last is computed over
  // [N, H * W, C] (TensorExpr::flat_positions).
  TensorExpr compute_stored(const std::string& name, const std::vector<int64_t>& shape, DType dtype,
                            const IndexFn& value, const std::vector<int64_t>& storage,
                            bool flat_positions = false);

  // A reduction block: out[s...] = combine over r... of value(s..., r...),
  // starting from the combiner's identity (or `init` when given). With an
  // empty reduction domain (an extent 0) it is a complete block writing that start.
  using ReduceFn =
      std::function<tir::Expr(const std::vector<tir::Expr>& spatial, const std::vector<tir::Expr>& reduce)>;
  TensorExpr reduce(const std::string& name, const std::vector<int64_t>& shape, DType dtype,
                    const std::vector<int64_t>& reduce_extents, Combiner combiner, const ReduceFn& value,
                    tir::Expr init = {});

  // A check block `name` over `extents`: at every index i, assert(cond,
  // message, values) for each assertion check(i) returns. It writes nothing
  // and runs before every block added after it, so none of those reads with
  // data it rejects (an index out of range, an integer divisor of zero).
  struct Assertion {
    tir::Expr cond;
    std::string message;  // "{}" stands for the next of values
    std::vector<tir::Expr> values;
  };
  using CheckFn = std::function<std::vector<Assertion>(const std::vector<tir::Expr>& indices)>;
  void check(const std::string& name, const std::vector<int64_t>& extents, const CheckFn& check);

  // A new buffer holding t: compute with t's flat iteration, in the blocks
  // its flat tail (flat_head) and its parts ask for.
  TensorExpr materialize(const std::string& name, const TensorExpr& t);

  // Materialises t as an output parameter named `name`. A buffer this context
  // created is renamed into the output (no copy); anything else gets a copy block.
  // With a storage order, the output holds t's dimensions in that order,
  // written by a block over them in that order (stores in sequence).
  void output(const std::string& name, const TensorExpr& t, const std::vector<int64_t>& storage = {});

  tir::PrimFunc finish();

  // A fresh block name based on `base` (block names are unique in a function).
  std::string unique_block_name(const std::string& base);

 private:
  TensorExpr compute_in_parts(const std::string& name, const std::vector<int64_t>& shape, DType dtype,
                              const IndexFn& value, int flat_tail, int64_t flat_head, const AxisParts& parts);
  void add_part_block(const std::string& block, const tir::Buffer& out, const AxisParts& parts, size_t k,
                      const IndexFn& value);
  void add_flat_block(const std::string& block, const tir::Buffer& out, size_t lead, int64_t first,
                      int64_t count, const IndexFn& value);
  std::string name_;
  LayoutChoices layouts_;
  std::vector<tir::Buffer> inputs_, outputs_, intermediates_;
  std::vector<tir::Stmt> stages_;
  std::vector<std::string> used_names_;
};

// The static shape of a graph type; a user error when it is not static.
std::vector<int64_t> static_shape(const graph::TensorType& type, const Span& span);

}  // namespace tessel::lower
