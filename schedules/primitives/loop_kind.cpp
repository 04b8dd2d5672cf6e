// parallel, vectorize, unroll and bind: change the kind of one loop.
// Errors: <p>.loop_not_found, <p>.loop_kind, <p>.reduction_loop, parallel and
// vectorize.not_data_parallel,
// vectorize.not_innermost, vectorize.non_constant_extent, unroll.thread_bound,
// bind.bad_tag, bind.already_bound, bind.tag_in_use.
#include "ir/tensor/functor.h"
#include "schedules/primitives/loop_analysis.h"
#include "schedules/primitives/loop_primitives.h"
#include "schedules/tree_query.h"

namespace tessel::sched {

using namespace tir;

namespace {

void check_serial(const ForNode& loop, const std::string& primitive, const std::string& becomes) {
  if (loop.for_kind == ForKind::kSerial) return;
  throw ScheduleError(primitive + ".loop_kind",
                      primitive + ": " + describe_loop(loop) + " is already " +
                          std::string(for_kind_name(loop.for_kind)) +
                          (loop.thread_tag.empty() ? "" : " (" + loop.thread_tag + ")") +
                          "; only a serial loop can be made " + becomes);
}

PrimFunc with_loop_kind(const PrimFunc& func, const ForNode& loop, ForKind kind, std::string tag = {}) {
  return replace_node(func, &loop, with_kind(loop, kind, std::move(tag)));
}

// The thread-bound loop with `tag` enclosing or enclosed by `loop`, if any.
const ForNode* loop_bound_to(const PrimFunc& func, const ForNode& loop, const std::string& tag) {
  for (const Stmt& s : path_to(func->body, &loop)) {
    const ForNode* f = s.as<ForNode>();
    if (f && f->thread_tag == tag) return f;
  }
  const ForNode* found = nullptr;
  walk(loop.body, [&](const Stmt& s) {
    const ForNode* f = s.as<ForNode>();
    if (f && f->thread_tag == tag) found = f;
    return found == nullptr;
  });
  return found;
}

}  // namespace

PrimFunc parallel(const PrimFunc& func, const VarNode* var) {
  const ForNode& loop = loop_or_throw(func, var, "parallel");
  check_serial(loop, "parallel", "parallel");
  check_data_parallel(loop, "parallel");
  return with_loop_kind(func, loop, ForKind::kParallel);
}

PrimFunc vectorize(const PrimFunc& func, const VarNode* var) {
  const ForNode& loop = loop_or_throw(func, var, "vectorize");
  check_serial(loop, "vectorize", "vectorized");
  // Inner loops that are unrolled with a constant extent are straight-line
  // code to a backend: the loop is still innermost in the code it vectorizes.
  bool has_inner_loop = false;
  walk(loop.body, [&](const Stmt& s) {
    const ForNode* inner = s.as<ForNode>();
    has_inner_loop = has_inner_loop || (inner && (inner->for_kind != ForKind::kUnrolled ||
                                                  inner->extent->kind != ExprKind::kIntImm));
    return !has_inner_loop;
  });
  if (has_inner_loop) {
    throw ScheduleError("vectorize.not_innermost",
                        "vectorize: " + describe_loop(loop) +
                            " encloses other loops (not unrolled); only an innermost loop is vectorized");
  }
  constant_extent(loop, "vectorize");
  check_data_parallel(loop, "vectorize");
  return with_loop_kind(func, loop, ForKind::kVectorized);
}

PrimFunc unroll(const PrimFunc& func, const VarNode* var) {
  const ForNode& loop = loop_or_throw(func, var, "unroll");
  if (loop.for_kind == ForKind::kThreadBound) {
    throw ScheduleError("unroll.thread_bound", "unroll: " + describe_loop(loop) + " is bound to " +
                                                   loop.thread_tag + " and cannot be unrolled");
  }
  return with_loop_kind(func, loop, ForKind::kUnrolled);
}

PrimFunc bind(const PrimFunc& func, const VarNode* var, const std::string& tag) {
  const ForNode& loop = loop_or_throw(func, var, "bind");
  if (!is_thread_tag(tag)) {
    throw ScheduleError("bind.bad_tag",
                        "bind: \"" + tag + "\" is not a thread tag (blockIdx.x..z, threadIdx.x..z)");
  }
  if (loop.for_kind == ForKind::kThreadBound) {
    throw ScheduleError("bind.already_bound",
                        "bind: " + describe_loop(loop) + " is already bound to " + loop.thread_tag);
  }
  check_serial(loop, "bind", "thread-bound");
  // Nested loops may share a threadIdx tag when their extents agree: both then
  // denote the same thread index (the cooperative-fetch pattern).
  const ForNode* other = loop_bound_to(func, loop, tag);
  const int64_t* extent = as_const_int(loop.extent);
  bool same_threads = other && is_thread_idx(tag) && extent && is_const_int(other->extent, *extent);
  if (other && !same_threads) {
    throw ScheduleError("bind.tag_in_use", "bind: " + describe_loop(loop) + " cannot take " + tag + ": " +
                                               describe_loop(*other) + " in the same nest is bound to it");
  }
  // A reduction variable bound to threadIdx is a reduction across the block's
  // threads, which the CUDA backend combines (src/codegen/cuda/cuda_reduction.h);
  // blocks cannot combine theirs, so bound to blockIdx it would race.
  if (!is_thread_idx(tag)) check_no_reduction_binding(loop, "bind");
  return with_loop_kind(func, loop, ForKind::kThreadBound, tag);
}

}  // namespace tessel::sched
