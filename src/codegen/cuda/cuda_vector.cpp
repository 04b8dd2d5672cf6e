// Vector copies: a vectorized loop of 2 or 4 lanes whose body copies f32
// from one global or shared buffer to another, both contiguous in the lane
// and starting at a multiple of the lane count, becomes one float2/float4
// load and store (TESSEL_COPY2/4 in the prelude). Buffers start 16-byte
// aligned (device allocations, the shared arena, and tessel_context_run_device
// stages a misaligned caller's buffer), so the start's alignment follows
// from its offset, which the simplifier must prove a multiple of the lanes
// under the loops' ranges. A thread's local array has no such alignment.
#include "ir/tensor/functor.h"
#include "ir/tensor/simplify.h"
#include "src/codegen/cuda/cuda_printer.h"

namespace tessel::codegen::cuda_detail {

using namespace tir;

namespace {

bool vectorizable(const BufferNode& b) {
  return b.dtype == DType::kF32 && b.scope != MemScope::kLocal;
}

}  // namespace

bool CudaPrinter::vector_copy(const ForNode& n, int indent, std::ostream& os) {
  const int64_t* lanes = as_const_int(n.extent);
  if (!lanes || (*lanes != 2 && *lanes != 4)) return false;
  const auto* store = n.body.as<StoreNode>();
  const auto* load = store ? store->value.as<LoadNode>() : nullptr;
  // Within one buffer the lanes could overlap, where the loop's order would matter.
  if (!load || load->buffer.get() == store->buffer.get() || !vectorizable(*store->buffer) ||
      !vectorizable(*load->buffer))
    return false;
  Expr to = linear_offset(*store->buffer, store->indices), from = linear_offset(*load->buffer, load->indices);
  auto at_lane = [&](const Expr& off, int64_t lane) {
    return substitute(off, {{n.var.get(), n.min + lane}});
  };
  // The loop's own range is not bound yet: the offsets at each lane are in terms of the loops around.
  for (const Expr* off : {&to, &from}) {
    Expr first = at_lane(*off, 0);
    for (int64_t lane = 1; lane < *lanes; ++lane)
      if (!is_const_int(ranges_.simplify(at_lane(*off, lane) - first), lane)) return false;
    if (!is_const_int(ranges_.simplify(floormod(first, int_imm(*lanes))), 0)) return false;
  }
  os << std::string(size_t(indent) * 2, ' ') << "TESSEL_COPY" << *lanes << "("
     << names_.buffer(store->buffer.get()) << " + " << expr(ranges_.simplify(at_lane(to, 0))) << ", "
     << names_.buffer(load->buffer.get()) << " + " << expr(ranges_.simplify(at_lane(from, 0))) << ");\n";
  return true;
}

}  // namespace tessel::codegen::cuda_detail
