// Tensor IR statements: loops, stores, allocations, conditionals, sequences,
// barriers and blocks. A Block names one computation so that schedules can
// address it; see ../shared/TENSOR_IR.md for the design.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "ir/tensor/expr.h"

namespace tessel::tir {

enum class StmtKind : uint8_t {
  kFor,
  kStore,
  kAllocate,
  kIfThenElse,
  kSeq,
  kBarrier,
  kBlock,
  kAssert,
  kPrefetch
};
std::string_view stmt_kind_name(StmtKind kind);

struct StmtNode : RefCounted {
  explicit StmtNode(StmtKind kind) : kind(kind) {}
  const StmtKind kind;
};
using Stmt = Ref<const StmtNode>;

// Loops are (min, extent) everywhere. Pragmas and hints ride in annotations
// (sorted by key, so that structural hashing is stable).
using Annotations = std::map<std::string, int64_t>;
// On a vectorized loop whose extent is not whole vectors (a row of 14, a
// plane of 49): the last vector is a masked full-width one, not narrower
// vectors and scalars. A hint for a CPU backend; the meaning is unchanged.
inline constexpr const char* kMaskedTail = "masked_tail";

enum class ForKind : uint8_t { kSerial, kParallel, kVectorized, kUnrolled, kThreadBound };
std::string_view for_kind_name(ForKind kind);  // "serial", "parallel", ...

// The GPU thread tags a loop may be bound to.
inline constexpr std::string_view kThreadTags[] = {"blockIdx.x",  "blockIdx.y",  "blockIdx.z",
                                                   "threadIdx.x", "threadIdx.y", "threadIdx.z"};
bool is_thread_tag(std::string_view tag);
bool is_block_idx(std::string_view tag);   // blockIdx.*
bool is_thread_idx(std::string_view tag);  // threadIdx.*

struct ForNode : StmtNode {
  static constexpr StmtKind kKind = StmtKind::kFor;
  ForNode(Var var, Expr min, Expr extent, ForKind for_kind, std::string thread_tag, Annotations annotations,
          Stmt body)
      : StmtNode(kKind),
        var(std::move(var)),
        min(std::move(min)),
        extent(std::move(extent)),
        for_kind(for_kind),
        thread_tag(std::move(thread_tag)),
        annotations(std::move(annotations)),
        body(std::move(body)) {}
  const Var var;
  const Expr min, extent;
  const ForKind for_kind;
  const std::string thread_tag;  // set exactly when for_kind is kThreadBound
  const Annotations annotations;
  const Stmt body;
};

struct StoreNode : StmtNode {
  static constexpr StmtKind kKind = StmtKind::kStore;
  StoreNode(Buffer buffer, Expr value, std::vector<Expr> indices)
      : StmtNode(kKind), buffer(std::move(buffer)), value(std::move(value)), indices(std::move(indices)) {}
  const Buffer buffer;
  const Expr value;
  const std::vector<Expr> indices;
};

// The buffer lives for the body; its scope is the buffer's.
struct AllocateNode : StmtNode {
  static constexpr StmtKind kKind = StmtKind::kAllocate;
  AllocateNode(Buffer buffer, Stmt body)
      : StmtNode(kKind), buffer(std::move(buffer)), body(std::move(body)) {}
  const Buffer buffer;
  const Stmt body;
};

struct IfThenElseNode : StmtNode {
  static constexpr StmtKind kKind = StmtKind::kIfThenElse;
  IfThenElseNode(Expr cond, Stmt then_case, Stmt else_case)
      : StmtNode(kKind),
        cond(std::move(cond)),
        then_case(std::move(then_case)),
        else_case(std::move(else_case)) {}
  const Expr cond;
  const Stmt then_case;
  const Stmt else_case;  // may be undefined
};

struct SeqNode : StmtNode {
  static constexpr StmtKind kKind = StmtKind::kSeq;
  explicit SeqNode(std::vector<Stmt> stmts) : StmtNode(kKind), stmts(std::move(stmts)) {}
  const std::vector<Stmt> stmts;
};

// __syncthreads(): every thread of the thread block reaches it before any passes.
struct BarrierNode : StmtNode {
  static constexpr StmtKind kKind = StmtKind::kBarrier;
  BarrierNode() : StmtNode(kKind) {}
};

// A run-time check of what the data must satisfy (a gathered index in range,
// an integer divisor not zero): when `cond` is false the function stops and
// reports `message`, each "{}" in it replaced by the next of `values`
// (integers, at most kMaxAssertValues). Printed `assert(cond, "message", values...)`.
struct AssertNode : StmtNode {
  static constexpr StmtKind kKind = StmtKind::kAssert;
  static constexpr size_t kMaxAssertValues = 4;
  AssertNode(Expr cond, std::string message, std::vector<Expr> values)
      : StmtNode(kKind), cond(std::move(cond)), message(std::move(message)), values(std::move(values)) {}
  const Expr cond;
  const std::string message;
  const std::vector<Expr> values;
};

// A hint that `lines` cache lines of `buffer`, from the element `offset`
// elements past its first one in memory, are read soon: a CPU backend asks
// the cache for them, the interpreter ignores it. Never a read in the IR's
// sense (no dependence, no region), and an address outside the buffer is
// harmless (a prefetch cannot fault). Printed `prefetch(buffer, offset, N lines)`.
struct PrefetchNode : StmtNode {
  static constexpr StmtKind kKind = StmtKind::kPrefetch;
  static constexpr int64_t kLineBytes = 64;
  PrefetchNode(Buffer buffer, Expr offset, int64_t lines)
      : StmtNode(kKind), buffer(std::move(buffer)), offset(std::move(offset)), lines(lines) {}
  const Buffer buffer;
  const Expr offset;
  const int64_t lines;
};

// The message of a failed assert: `message` with its "{}"s replaced by `values`.
std::string format_assert_message(std::string_view message, const std::vector<int64_t>& values);

struct Range {
  Expr min, extent;
};

enum class IterKind : uint8_t { kSpatial, kReduce };
std::string_view iter_kind_name(IterKind kind);  // "spatial", "reduce"

// A block's iteration variable: its domain and whether it is a reduction axis.
struct IterVar {
  Var var;
  Range dom;
  IterKind kind;
};

struct BufferRegion {
  Buffer buffer;
  std::vector<Range> region;  // one Range per dimension
};

// A named computation. Its body (and init) are written only in terms of its
// iteration variables; `iter_values` binds each of them to an expression of
// the enclosing loop variables, and loop transformations change only those
// bindings. `predicate` guards the whole block (true unless a split is not
// exact). `init` runs at the first iteration of all reduction variables.
// Buffers in `alloc_buffers` live for the block (the root block holds the
// function's intermediates).
struct BlockNode : StmtNode {
  static constexpr StmtKind kKind = StmtKind::kBlock;
  BlockNode(std::string name, std::vector<IterVar> iter_vars, std::vector<Expr> iter_values, Expr predicate,
            std::vector<BufferRegion> reads, std::vector<BufferRegion> writes, Stmt init, Stmt body,
            std::vector<Buffer> alloc_buffers, Annotations annotations)
      : StmtNode(kKind),
        name(std::move(name)),
        iter_vars(std::move(iter_vars)),
        iter_values(std::move(iter_values)),
        predicate(std::move(predicate)),
        reads(std::move(reads)),
        writes(std::move(writes)),
        init(std::move(init)),
        body(std::move(body)),
        alloc_buffers(std::move(alloc_buffers)),
        annotations(std::move(annotations)) {}
  const std::string name;
  const std::vector<IterVar> iter_vars;
  const std::vector<Expr> iter_values;
  const Expr predicate;
  const std::vector<BufferRegion> reads, writes;
  const Stmt init;  // may be undefined
  const Stmt body;
  const std::vector<Buffer> alloc_buffers;
  const Annotations annotations;

  bool is_reduction() const;  // has a reduction iteration variable
};
using Block = Ref<const BlockNode>;

// ---- Builders.
Stmt make_for(Var var, Expr min, Expr extent, ForKind kind, Stmt body, std::string thread_tag = {},
              Annotations annotations = {});
Stmt make_store(Buffer buffer, Expr value, std::vector<Expr> indices);
Stmt make_allocate(Buffer buffer, Stmt body);
Stmt make_if(Expr cond, Stmt then_case, Stmt else_case = {});
// One statement: flattens nested sequences, and returns the only element of a
// one-element list.
Stmt make_seq(std::vector<Stmt> stmts);
Stmt make_barrier();
Stmt make_assert(Expr cond, std::string message, std::vector<Expr> values = {});
Stmt make_prefetch(Buffer buffer, Expr offset, int64_t lines);

// Copies of a node with one field changed, for mutators and primitives.
Stmt with_body(const ForNode& loop, Stmt body);
Stmt with_kind(const ForNode& loop, ForKind kind, std::string thread_tag = {});

}  // namespace tessel::tir
