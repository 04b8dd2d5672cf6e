// The loop metadata of the LLVM backend: what LLVM's loop passes are told
// about the loops the schedule vectorized, and about the serial loops around
// them.
#include <functional>
#include <map>
#include <set>
#include <vector>

#include "ir/tensor/functor.h"
#include "ir/tensor/simplify.h"
#include "src/codegen/llvm/codegen_llvm.h"

namespace tessel::codegen {

using namespace tir;

// The hints on a loop the schedule vectorized. Its accesses form the access
// group `group`, declared free of loop-carried dependences, and the vectorizer
// must vectorize it (at the width its cost model finds best for the target;
// the tail runs scalar).
llvm::MDNode* CodegenLLVM::vector_loop_hints(const ForNode& loop, llvm::MDNode* group, bool whole_vectors,
                                             bool one_vector_copy) {
  llvm::Metadata* parallel[] = {llvm::MDString::get(ctx_, "llvm.loop.parallel_accesses"), group};
  llvm::Metadata* enable[] = {llvm::MDString::get(ctx_, "llvm.loop.vectorize.enable"),
                              llvm::ConstantAsMetadata::get(b_.getTrue())};
  // A loop of exactly one f32 vector is not unrolled: unrolled into scalars
  // before the vectorizer sees it, it may stay scalar (a flat conv ran many
  // times slower). Other lengths may be unrolled and re-vectorized by SLP,
  // which keeps a matmul tile's accumulators in registers and does better
  // than the vectorizer on a 7-wide row (MobileNet's last pointwise convs).
  std::vector<llvm::Metadata*> hint_list = {llvm::MDNode::get(ctx_, parallel),
                                            llvm::MDNode::get(ctx_, enable)};
  const int64_t* extent = as_const_int(loop.extent);
  bool one_vector = (extent && *extent == f32_lanes()) || one_vector_copy;
  if (one_vector)
    hint_list.push_back(llvm::MDNode::get(ctx_, {llvm::MDString::get(ctx_, "llvm.loop.unroll.disable")}));
  // A loop that reads at a constant stride (a stride phase's copy,
  // x[2 * i - 1] and x[2 * i]) is vectorized before it is unrolled: LLVM's
  // vectorizer reads such a group as whole vectors and deinterleaves them
  // with shuffles, where SLP on the unrolled copies gathered each vector
  // element by element. Unrolling stays allowed after the vectorizer.
  if (!one_vector && reads_at_a_stride(loop)) {
    hint_list.push_back(llvm::MDNode::get(ctx_, {llvm::MDString::get(ctx_, "llvm.loop.unroll.disable")}));
    hint_list.push_back(llvm::MDNode::get(
        ctx_, {llvm::MDString::get(ctx_, "llvm.loop.vectorize.followup_all"),
               llvm::MDNode::get(ctx_, {llvm::MDString::get(ctx_, "llvm.loop.isvectorized")})}));
  }
  if (whole_vectors) {
    llvm::Metadata* once[] = {llvm::MDString::get(ctx_, "llvm.loop.interleave.count"),
                              llvm::ConstantAsMetadata::get(b_.getInt32(1))};
    hint_list.push_back(llvm::MDNode::get(ctx_, once));
  }
  // A masked tail (tir::kMaskedTail) is folded into masked vectors, and
  // the loop is not unrolled before the vectorizer sees it.
  if (loop.annotations.count(kMaskedTail)) {
    llvm::Metadata* fold[] = {llvm::MDString::get(ctx_, "llvm.loop.vectorize.predicate.enable"),
                              llvm::ConstantAsMetadata::get(b_.getTrue())};
    hint_list.push_back(llvm::MDNode::get(ctx_, fold));
    hint_list.push_back(llvm::MDNode::get(ctx_, {llvm::MDString::get(ctx_, "llvm.loop.unroll.disable")}));
  }
  return llvm::MDNode::get(ctx_, hint_list);
}

// A serial loop around a loop the schedule vectorized is not vectorized by
// LLVM: once it has unrolled a short inner vector loop (a pool's row of 14),
// the serial loop is innermost, and LLVM vectorized it across rows, with a
// gather or scatter per access.
bool CodegenLLVM::vectorizes_inside(const ForNode& loop) {
  bool found = false;
  walk(loop.body, [&](const Stmt& s) {
    const auto* f = s.as<ForNode>();
    found = found || (f && f->for_kind == ForKind::kVectorized);
    return !found;
  });
  return found;
}

// Whether a load in the loop's body steps by a constant other than 0 or 1
// elements per iteration of the loop's variable.
bool CodegenLLVM::reads_at_a_stride(const ForNode& loop) {
  bool strided = false;
  walk_exprs(loop.body, [&](const Expr& e) {
    const auto* load = e.as<LoadNode>();
    if (strided || !load) return;
    Expr offset = flat_offset(*load->buffer, load->indices);
    Expr simplified = simplify(substitute(offset, {{loop.var.get(), int_imm(1)}}) -
                               substitute(offset, {{loop.var.get(), int_imm(0)}}));
    const int64_t* c = as_const_int(simplified);
    strided = c && *c != 0 && *c != 1;
  });
  return strided;
}

llvm::MDNode* CodegenLLVM::no_vectorize_hint() {
  llvm::Metadata* disable[] = {llvm::MDString::get(ctx_, "llvm.loop.vectorize.enable"),
                               llvm::ConstantAsMetadata::get(b_.getFalse())};
  return llvm::MDNode::get(ctx_, {llvm::MDNode::get(ctx_, disable)});
}

// A loop of a few whole vectors (a register tile's row of two or three) runs
// as that many copies of a loop of one vector each (emit_vector_copies): LLVM
// vectorizes a loop of one vector into straight vector code, where a loop of
// several was vectorized, then unrolled by passes that come after the last
// removal of redundant loads, and a tile of such rows reloaded its input per
// row, rebuilt it with shuffles, and stored its accumulators at every step
// of the reduction. Only where every vector loop sharing a buffer with it
// is copied too: a pool's accumulator row initialized and copied out by such
// loops, but updated by a loop of a partial vector, was slower with its
// loops vectorized in two ways.
constexpr int64_t kMostVectorCopies = 8;

std::set<const ForNode*> CodegenLLVM::vector_loops_to_copy(const Stmt& root) const {
  int64_t lanes = f32_lanes();
  auto copies = [&](const ForNode& loop) {
    const int64_t* extent = as_const_int(loop.extent);
    return extent && lanes > 1 && *extent % lanes == 0 && *extent / lanes >= 2 &&
           *extent / lanes <= kMostVectorCopies && !loop.annotations.count(kMaskedTail);
  };
  std::vector<const ForNode*> loops;
  walk(root, [&](const Stmt& s) {
    const auto* f = s.as<ForNode>();
    if (f && f->for_kind == ForKind::kVectorized) loops.push_back(f);
    return true;
  });
  std::vector<size_t> parent(loops.size());
  for (size_t i = 0; i < loops.size(); ++i) parent[i] = i;
  std::function<size_t(size_t)> find = [&](size_t i) {
    return parent[i] == i ? i : parent[i] = find(parent[i]);
  };
  std::map<const BufferNode*, size_t> first_user;
  for (size_t i = 0; i < loops.size(); ++i) {
    auto link = [&](const BufferNode* buffer) {
      auto [it, added] = first_user.emplace(buffer, i);
      if (!added) parent[find(i)] = find(it->second);
    };
    walk(loops[i]->body, [&](const Stmt& s) {
      if (const auto* store = s.as<StoreNode>()) link(store->buffer.get());
      return true;
    });
    walk_exprs(loops[i]->body, [&](const Expr& e) {
      if (const auto* load = e.as<LoadNode>()) link(load->buffer.get());
    });
  }
  std::vector<bool> group_copies(loops.size(), true);
  for (size_t i = 0; i < loops.size(); ++i)
    if (!copies(*loops[i])) group_copies[find(i)] = false;
  std::set<const ForNode*> out;
  for (size_t i = 0; i < loops.size(); ++i)
    if (group_copies[find(i)]) out.insert(loops[i]);
  return out;
}

}  // namespace tessel::codegen
