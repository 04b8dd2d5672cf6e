// cache_read and cache_write: a copy of a buffer in another memory scope, with a
// copy block at the root, and the one block that read or wrote the original
// redirected to the copy. The copy covers the whole buffer; compute_at narrows it.
#include <algorithm>

#include "ir/tensor/access_region.h"
#include "ir/tensor/functor.h"
#include "schedules/primitives/block_analysis.h"
#include "schedules/primitives/block_primitives.h"
#include "schedules/tree_query.h"

namespace tessel::sched {

using namespace tir;

namespace {

// for ax...: block name(v...: spatial) { dst[v...] = src[v...] }, over the whole buffer.
Stmt make_copy_nest(const std::string& name, const Buffer& src, const Buffer& dst) {
  BlockFields f;
  f.name = name;
  f.predicate = bool_imm(true);
  std::vector<LoopSpec> loops;
  std::vector<Expr> indices;
  for (int d = 0; d < src->rank(); ++d) {
    Var v = var("v" + std::to_string(d)), ax = var("ax" + std::to_string(d));
    f.iter_vars.push_back({v, {int_imm(0), int_imm(src->shape[d])}, IterKind::kSpatial});
    f.iter_values.push_back(ax);
    loops.push_back({ax, int_imm(0), int_imm(src->shape[d])});
    indices.push_back(v);
  }
  f.body = make_store(dst, load(src, indices), indices);
  return make_nest(loops, make_block_detected(std::move(f)));
}

// The copy's block and buffer share one name, unique among the blocks.
std::string cache_name(const PrimFunc& func, const Buffer& original, MemScope scope) {
  return unique_block_name(func, original->name + "_" + std::string(mem_scope_name(scope)));
}

std::string index_error(const std::string& what, const BlockNode& block, int index, size_t count) {
  return "block '" + block.name + "' has " + std::to_string(count) + " " + what + " buffer(s); index " +
         std::to_string(index) + " is out of range";
}

}  // namespace

PrimitiveResult cache_read(const PrimFunc& func, const std::string& consumer, int read_index,
                           MemScope scope) {
  BlockAt c = require_block(func, consumer, "cache_read");
  if (read_index < 0 || read_index >= int(c.node->reads.size()))
    throw ScheduleError("cache_read.bad_index",
                        index_error("read", *c.node, read_index, c.node->reads.size()));
  Buffer src = c.node->reads[read_index].buffer;
  if (lists_buffer(c.node->writes, src))
    throw ScheduleError("cache_read.reads_own_output", "block '" + consumer + "' writes buffer '" +
                                                           src->name +
                                                           "' as well as reading it; use cache_write for it");
  // The copy goes right after the last nest that writes the buffer before the
  // consumer's nest (at the start for a function input).
  int consumer_item = root_item(func, c.node);
  int position = 0;
  for (const Stmt& w : writers_of(func, src)) {
    int item = root_item(func, w.get());
    if (item == consumer_item)
      throw ScheduleError("cache_read.producer_in_consumer_nest",
                          "block '" + w.as<BlockNode>()->name + "' writes '" + src->name +
                              "' in the loop nest of '" + consumer + "'; apply cache_read before compute_at");
    if (item < consumer_item) position = std::max(position, item + 1);
  }
  std::string name = cache_name(func, src, scope);
  Buffer copy = make_buffer(name, src->dtype, src->shape, scope);
  Stmt reader = substitute_buffers(c.stmt, BufferMap{{src.get(), copy}});
  PrimFunc out = replace_node(func, c.node, reader);
  out = insert_at_root(out, position, make_copy_nest(name, src, copy));
  return {with_root_allocs(out, {copy}), name};
}

PrimitiveResult cache_write(const PrimFunc& func, const std::string& producer, int write_index,
                            MemScope scope) {
  BlockAt p = require_block(func, producer, "cache_write");
  if (write_index < 0 || write_index >= int(p.node->writes.size()))
    throw ScheduleError("cache_write.bad_index",
                        index_error("written", *p.node, write_index, p.node->writes.size()));
  Buffer dst = p.node->writes[write_index].buffer;
  std::vector<Stmt> writers = writers_of(func, dst);
  if (writers.size() != 1)
    throw ScheduleError("cache_write.multiple_writers", "buffer '" + dst->name + "' is written by " +
                                                            std::to_string(writers.size()) +
                                                            " blocks; cache_write needs its only writer");
  int item = root_item(func, p.node);
  for (const Stmt& r : readers_of(func, dst)) {
    if (r.get() == p.node || root_item(func, r.get()) != item) continue;
    throw ScheduleError("cache_write.consumer_in_nest", "block '" + r.as<BlockNode>()->name + "' reads '" +
                                                            dst->name + "' inside the loop nest of '" +
                                                            producer +
                                                            "'; apply cache_write before compute_at");
  }
  std::string name = cache_name(func, dst, scope);
  Buffer cache = make_buffer(name, dst->dtype, dst->shape, scope);
  Stmt writer = substitute_buffers(p.stmt, BufferMap{{dst.get(), cache}});
  PrimFunc out = replace_node(func, p.node, writer);
  out = insert_at_root(out, item + 1, make_copy_nest(name, cache, dst));
  return {with_root_allocs(out, {cache}), name};
}

}  // namespace tessel::sched
