// storage_align: pads the stride of one dimension of an intermediate buffer so
// that stride % factor == offset (e.g. to avoid shared-memory bank conflicts).
#include <algorithm>

#include "ir/tensor/functor.h"
#include "schedules/primitives/block_analysis.h"
#include "schedules/primitives/block_primitives.h"

namespace tessel::sched {

using namespace tir;

namespace {

// Strides from the innermost dimension out: each at least the extent of the
// dimensions inside it (keeping earlier padding), `axis` rounded up to the
// next s with s % factor == offset.
std::vector<int64_t> aligned_strides(const BufferNode& b, int axis, int64_t factor, int64_t offset) {
  std::vector<int64_t> strides(b.rank());
  for (int d = b.rank() - 1; d >= 0; --d) {
    int64_t dense = d == b.rank() - 1 ? 1 : strides[d + 1] * b.shape[d + 1];
    int64_t s = std::max(dense, b.strides[d]);
    if (d == axis) {
      s = dense;
      while (s % factor != offset) ++s;
    }
    strides[d] = s;
  }
  return strides;
}

}  // namespace

PrimFunc storage_align(const PrimFunc& func, const std::string& block, int buffer_index, int axis,
                       int64_t factor, int64_t offset) {
  const std::string kP = "storage_align";
  BlockAt b = require_block(func, block, kP);
  if (buffer_index < 0 || buffer_index >= int(b.node->writes.size()))
    throw ScheduleError(kP + ".bad_index", "block '" + block + "' writes " +
                                               std::to_string(b.node->writes.size()) + " buffer(s); index " +
                                               std::to_string(buffer_index) + " is out of range");
  Buffer buffer = b.node->writes[buffer_index].buffer;
  if (!is_intermediate(func, buffer))
    throw ScheduleError(kP + ".not_intermediate", "buffer '" + buffer->name +
                                                      "' is a function parameter; its "
                                                      "layout belongs to the caller");
  if (axis < 0 || axis >= buffer->rank())
    throw ScheduleError(kP + ".bad_axis", "axis " + std::to_string(axis) + " is not a dimension of '" +
                                              buffer->name + "' (rank " + std::to_string(buffer->rank()) +
                                              ")");
  if (factor <= 0 || offset < 0 || offset >= factor)
    throw ScheduleError(kP + ".bad_factor", "need factor > 0 and 0 <= offset < factor, got factor " +
                                                std::to_string(factor) + ", offset " +
                                                std::to_string(offset));
  Buffer aligned = make_buffer(buffer->name, buffer->dtype, buffer->shape, buffer->scope,
                               aligned_strides(*buffer, axis, factor, offset));
  return with_body(*func, substitute_buffers(func->body, BufferMap{{buffer.get(), aligned}}));
}

}  // namespace tessel::sched
