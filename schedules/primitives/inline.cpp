// compute_inline and reverse_compute_inline: folding a complete, injective
// block into its consumers (its producer), removing the block and its buffer.
#include <algorithm>

#include "ir/tensor/functor.h"
#include "schedules/primitives/block_analysis.h"
#include "schedules/primitives/block_primitives.h"
#include "schedules/tree_query.h"

namespace tessel::sched {

using namespace tir;

namespace {

// Replaces every load of `buffer` by the stored value, with the storing block's
// iteration variables (at `positions`, one per dimension) bound to the load's indices.
class LoadInliner : public StmtMutator {
 public:
  LoadInliner(const BlockNode& block, const Buffer& buffer, std::vector<int> positions, Expr value)
      : block_(block), buffer_(buffer), positions_(std::move(positions)), value_(std::move(value)) {}
  using StmtMutator::mutate;

 protected:
  Expr mutate_load(const LoadNode& node, const Expr& self) override {
    Expr rebuilt = StmtMutator::mutate_load(node, self);
    const LoadNode& l = *rebuilt.as<LoadNode>();
    if (!l.buffer.same_as(buffer_)) return rebuilt;
    VarMap bind;
    for (size_t d = 0; d < positions_.size(); ++d)
      bind[block_.iter_vars[positions_[d]].var.get()] = l.indices[d];
    return substitute(value_, bind);
  }

 private:
  const BlockNode& block_;
  Buffer buffer_;
  std::vector<int> positions_;
  Expr value_;
};

// The block written as `B[v...] = value`: its store, with v distinct iteration
// variables and value using no others. Throws `<primitive>.<why>` otherwise.
std::pair<const StoreNode*, std::vector<int>> injective_store(const BlockNode& b,
                                                              const std::string& primitive) {
  if (!is_complete(b))
    throw ScheduleError(primitive + ".not_complete",
                        "block '" + b.name +
                            "' is a reduction (it has reduction "
                            "variables or an init); only complete blocks can be inlined");
  const StoreNode* store = single_store(b);
  if (!store)
    throw ScheduleError(primitive + ".body_not_store",
                        "the body of block '" + b.name + "' is not a single store");
  if (!predicate_is_true(b))
    throw ScheduleError(primitive + ".predicated",
                        "block '" + b.name + "' has a predicate (a non-exact split)");
  std::optional<std::vector<int>> positions = trivial_indices(b, store->indices);
  if (!positions)
    throw ScheduleError(primitive + ".not_injective", "block '" + b.name +
                                                          "' does not store at distinct "
                                                          "iteration variables");
  for (const VarNode* v : vars_used(store->value)) {
    int p = iter_var_index(b, Expr(v));
    if (p >= 0 && std::find(positions->begin(), positions->end(), p) == positions->end())
      throw ScheduleError(primitive + ".not_injective", "the value block '" + b.name +
                                                            "' stores depends on '" + v->name +
                                                            "', which does not index the stored element");
  }
  return {store, *positions};
}

bool loads_buffer(const Expr& e, const Buffer& buffer) {
  bool found = false;
  walk_exprs(e, [&](const Expr& x) {
    if (const LoadNode* l = x.as<LoadNode>()) found = found || l->buffer.same_as(buffer);
  });
  return found;
}

void check_inlinable_buffer(const PrimFunc& func, const Buffer& buffer, const std::string& block,
                            const std::string& primitive) {
  if (!is_intermediate(func, buffer))
    throw ScheduleError(primitive + ".output_block", "block '" + block + "' writes '" + buffer->name +
                                                         "', which is not an intermediate of the function");
  if (writers_of(func, buffer).size() != 1)
    throw ScheduleError(primitive + ".multiple_writers", "buffer '" + buffer->name + "' has several writers");
}

// Position of a block in program order.
int order_of(const PrimFunc& func, const StmtNode* block) {
  std::vector<Stmt> blocks = all_blocks(func);
  for (size_t i = 0; i < blocks.size(); ++i)
    if (blocks[i].get() == block) return int(i);
  return -1;
}

PrimFunc remove_block_and_buffer(const PrimFunc& func, const std::string& block, const Buffer& buffer) {
  Stmt b = find_block(func, block);
  PrimFunc out = remove_stmt(func, removable_nest(func, b.get()).get());
  return with_root_allocs(out, {}, buffer.get());
}

// Positions of the iteration variables at which the consumer loads `b`: every
// load of b must be b[v...] with the variables of the element it stores, over all of b.
std::vector<int> whole_buffer_read(const BlockNode& c, const StoreNode& store,
                                   const std::vector<int>& positions, const Buffer& b,
                                   const std::string& kP) {
  std::vector<int> load_positions;
  bool plain = true;
  walk_exprs(store.value, [&](const Expr& e) {
    const LoadNode* l = e.as<LoadNode>();
    if (!l || !l->buffer.same_as(b)) return;
    std::optional<std::vector<int>> pos = trivial_indices(c, l->indices);
    if (!pos || (!load_positions.empty() && *pos != load_positions)) plain = false;
    if (pos) load_positions = *pos;
  });
  std::vector<int> sorted_load = load_positions, sorted_store = positions;
  std::sort(sorted_load.begin(), sorted_load.end());
  std::sort(sorted_store.begin(), sorted_store.end());
  if (!plain || sorted_load != sorted_store || positions.size() != c.iter_vars.size())
    throw ScheduleError(kP + ".not_injective",
                        "block '" + c.name + "' does not read '" + b->name +
                            "' at exactly the iteration variables of the element it stores");
  for (int d = 0; d < b->rank(); ++d) {
    const Range& dom = c.iter_vars[load_positions[d]].dom;
    if (!is_const_int(dom.min, 0) || !is_const_int(dom.extent, b->shape[d]))
      throw ScheduleError(kP + ".partial_read",
                          "block '" + c.name + "' reads only part of '" + b->name + "'");
  }
  return load_positions;
}

}  // namespace

PrimFunc compute_inline(const PrimFunc& func, const std::string& block) {
  const std::string kP = "compute_inline";
  BlockAt p = require_block(func, block, kP);
  auto [store, positions] = injective_store(*p.node, kP);
  check_inlinable_buffer(func, store->buffer, block, kP);
  if (loads_buffer(store->value, store->buffer))
    throw ScheduleError(kP + ".reads_own_output", "block '" + block + "' reads the buffer it writes");
  // The value is evaluated at the consumers now: what it reads must not change in between.
  for (const BufferRegion& r : p.node->reads)
    for (const Stmt& w : writers_of(func, r.buffer))
      if (order_of(func, w.get()) > order_of(func, p.node))
        throw ScheduleError(kP + ".dependence", "block '" + block + "' reads '" + r.buffer->name +
                                                    "', which block '" + w.as<BlockNode>()->name +
                                                    "' writes after it");
  LoadInliner inliner(*p.node, store->buffer, positions, store->value);
  PrimFunc out = func;
  for (const Stmt& c : readers_of(func, store->buffer)) {
    if (c.get() == p.node) continue;
    Stmt cb_stmt = find_block(out, c.as<BlockNode>()->name);
    const BlockNode& cb = *cb_stmt.as<BlockNode>();
    BlockFields f = fields_of(cb);
    f.init = inliner.mutate(f.init);
    f.body = inliner.mutate(f.body);
    out = replace_node(out, &cb, make_block_detected(std::move(f)));
  }
  return remove_block_and_buffer(out, block, store->buffer);
}

PrimFunc reverse_compute_inline(const PrimFunc& func, const std::string& block) {
  const std::string kP = "reverse_compute_inline";
  BlockAt c = require_block(func, block, kP);
  auto [store, positions] = injective_store(*c.node, kP);
  // The one buffer it reads that a block writes.
  std::vector<Buffer> produced;
  for (const BufferRegion& r : c.node->reads)
    if (!writers_of(func, r.buffer).empty() && !lists_buffer(c.node->writes, r.buffer) &&
        std::none_of(produced.begin(), produced.end(), [&](const Buffer& b) { return b.same_as(r.buffer); }))
      produced.push_back(r.buffer);
  if (produced.size() != 1)
    throw ScheduleError(kP + ".producer_count", "block '" + block + "' reads " +
                                                    std::to_string(produced.size()) +
                                                    " buffers written by other blocks; it needs exactly one");
  Buffer b = produced[0];
  check_inlinable_buffer(func, b, writers_of(func, b)[0].as<BlockNode>()->name, kP);
  if (writers_of(func, store->buffer).size() != 1)
    throw ScheduleError(kP + ".multiple_writers", "buffer '" + store->buffer->name + "' has several writers");
  BlockAt p{writers_of(func, b)[0], writers_of(func, b)[0].as<BlockNode>()};
  for (const Stmt& r : readers_of(func, b))
    if (r.get() != c.node && r.get() != p.node)
      throw ScheduleError(kP + ".other_consumers",
                          "buffer '" + b->name + "' is read by blocks other than '" + block + "'");
  std::vector<int> load_positions = whole_buffer_read(*c.node, *store, positions, b, kP);
  // The producer may store anywhere (its indices become the consumer's), but as one complete store.
  const StoreNode* pstore = single_store(*p.node);
  if (!is_complete(*p.node) || !pstore || loads_buffer(pstore->value, b))
    throw ScheduleError(kP + ".producer_not_complete",
                        "producer '" + p.node->name +
                            "' is not a complete block "
                            "of a single store (a reduction cannot take its consumer)");
  for (const BufferRegion& r : c.node->reads) {
    if (r.buffer.same_as(b)) continue;
    for (const Stmt& w : writers_of(func, r.buffer))
      if (order_of(func, w.get()) > order_of(func, p.node))
        throw ScheduleError(kP + ".dependence", "block '" + block + "' reads '" + r.buffer->name +
                                                    "', written after its producer '" + p.node->name + "'");
  }
  // c's variable at load dimension d becomes the producer's store index d.
  VarMap bind;
  for (int d = 0; d < b->rank(); ++d)
    bind[c.node->iter_vars[load_positions[d]].var.get()] = pstore->indices[d];
  // The loads are at c's own variables, so each is exactly the producer's value.
  LoadInliner inliner(*c.node, b, {}, pstore->value);
  Expr value = substitute(inliner.mutate(store->value), bind);
  std::vector<Expr> indices;
  for (const Expr& i : store->indices) indices.push_back(substitute(i, bind));
  BlockFields f = fields_of(*p.node);
  f.body = make_store(store->buffer, value, indices);
  PrimFunc out = replace_node(func, p.node, make_block_detected(std::move(f)));
  return remove_block_and_buffer(out, block, b);
}

}  // namespace tessel::sched
