// Analyses and small rebuilders shared by the block primitives.
#include "schedules/primitives/block_analysis.h"

#include <algorithm>
#include <unordered_set>

#include "ir/core/diagnostics.h"
#include "ir/tensor/access_region.h"
#include "ir/tensor/functor.h"
#include "schedules/tree_query.h"

namespace tessel::sched {

using namespace tir;

BlockAt require_block(const PrimFunc& func, const std::string& name, const std::string& primitive) {
  Stmt s = find_block(func, name);
  if (!s.defined() || s.get() == func->body.get())
    throw ScheduleError(primitive + ".no_block", "no block named '" + name + "' in function " + func->name);
  return {s, s.as<BlockNode>()};
}

Stmt require_loop(const PrimFunc& func, const VarNode* loop, const std::string& primitive) {
  Stmt s = find_loop(func, loop);
  if (!s.defined())
    throw ScheduleError(
        primitive + ".no_loop",
        "no loop over '" + (loop ? loop->name : std::string("<null>")) + "' in function " + func->name);
  return s;
}

BlockFields fields_of(const BlockNode& b) {
  return {b.name,   b.iter_vars, b.iter_values, b.predicate,     b.reads,
          b.writes, b.init,      b.body,        b.alloc_buffers, b.annotations};
}

Block make_block(BlockFields f) {
  return make_ref<BlockNode>(std::move(f.name), std::move(f.iter_vars), std::move(f.iter_values),
                             std::move(f.predicate), std::move(f.reads), std::move(f.writes),
                             std::move(f.init), std::move(f.body), std::move(f.alloc_buffers),
                             std::move(f.annotations));
}

Block make_block_detected(BlockFields f) {
  AccessRegions regions = detect_access_regions(f.init, f.body, f.alloc_buffers);
  f.reads = std::move(regions.reads);
  f.writes = std::move(regions.writes);
  return make_block(std::move(f));
}

bool is_complete(const BlockNode& block) {
  return !block.is_reduction() && !block.init.defined();
}

const StoreNode* single_store(const BlockNode& block) {
  return block.body.as<StoreNode>();
}

int iter_var_index(const BlockNode& block, const Expr& e) {
  for (size_t i = 0; i < block.iter_vars.size(); ++i)
    if (block.iter_vars[i].var.get() == e.get()) return int(i);
  return -1;
}

std::optional<std::vector<int>> trivial_indices(const BlockNode& block, const std::vector<Expr>& indices) {
  std::vector<int> positions;
  for (const Expr& e : indices) {
    int p = iter_var_index(block, e);
    if (p < 0 || std::find(positions.begin(), positions.end(), p) != positions.end()) return std::nullopt;
    positions.push_back(p);
  }
  return positions;
}

std::vector<const VarNode*> vars_used(const Expr& e) {
  std::vector<const VarNode*> out;
  walk_exprs(e, [&](const Expr& x) {
    if (const VarNode* v = x.as<VarNode>(); v && std::find(out.begin(), out.end(), v) == out.end())
      out.push_back(v);
  });
  return out;
}

bool predicate_is_true(const BlockNode& block) {
  return !block.predicate.defined() || is_const_int(block.predicate, 1);
}

bool is_function_input(const PrimFunc& func, const Buffer& buffer) {
  return std::any_of(func->inputs.begin(), func->inputs.end(),
                     [&](const Buffer& b) { return b.same_as(buffer); });
}

bool is_function_output(const PrimFunc& func, const Buffer& buffer) {
  return std::any_of(func->outputs.begin(), func->outputs.end(),
                     [&](const Buffer& b) { return b.same_as(buffer); });
}

bool is_intermediate(const PrimFunc& func, const Buffer& buffer) {
  const BlockNode* root = root_block(func);
  if (!root) return false;
  return std::any_of(root->alloc_buffers.begin(), root->alloc_buffers.end(),
                     [&](const Buffer& b) { return b.same_as(buffer); });
}

bool lists_buffer(const std::vector<BufferRegion>& regions, const Buffer& buffer) {
  return std::any_of(regions.begin(), regions.end(),
                     [&](const BufferRegion& r) { return r.buffer.same_as(buffer); });
}

std::vector<Stmt> writers_of(const PrimFunc& func, const Buffer& buffer) {
  std::vector<Stmt> out;
  for (const Stmt& s : all_blocks(func))
    if (lists_buffer(s.as<BlockNode>()->writes, buffer)) out.push_back(s);
  return out;
}

std::vector<Stmt> readers_of(const PrimFunc& func, const Buffer& buffer) {
  std::vector<Stmt> out;
  for (const Stmt& s : all_blocks(func))
    if (lists_buffer(s.as<BlockNode>()->reads, buffer)) out.push_back(s);
  return out;
}

std::vector<Stmt> seq_items(const Stmt& s) {
  if (const SeqNode* seq = s.as<SeqNode>()) return seq->stmts;
  return {s};
}

Stmt removable_nest(const PrimFunc& func, const StmtNode* block) {
  std::vector<Stmt> path = path_to(func->body, block);
  TESSEL_ICHECK(!path.empty()) << "block not in function " << func->name;
  size_t top = path.size() - 1;
  while (top > 0 && path[top - 1]->kind == StmtKind::kFor) --top;
  return path[top];
}

PrimFunc remove_stmt(const PrimFunc& func, const StmtNode* target) {
  std::vector<Stmt> path = path_to(func->body, target);
  TESSEL_ICHECK(path.size() >= 2) << "cannot remove the body of " << func->name;
  const Stmt& parent = path[path.size() - 2];
  if (parent->kind == StmtKind::kSeq) return replace_node(func, target, Stmt{});
  // The only statement of a block body: the body becomes an empty sequence.
  TESSEL_ICHECK(parent->kind == StmtKind::kBlock)
      << "removing the only statement of a " << stmt_kind_name(parent->kind);
  return replace_node(func, target, make_ref<SeqNode>(std::vector<Stmt>{}));
}

std::vector<Stmt> loops_below(const PrimFunc& func, const VarNode* loop, const StmtNode* block) {
  std::vector<Stmt> loops = loops_above(func, block);
  auto it = std::find_if(loops.begin(), loops.end(),
                         [&](const Stmt& s) { return s.as<ForNode>()->var.get() == loop; });
  if (it == loops.end()) return {};
  return std::vector<Stmt>(it + 1, loops.end());
}

bool is_under(const PrimFunc& func, const StmtNode* ancestor, const StmtNode* node) {
  std::vector<Stmt> path = path_to(func->body, node);
  return std::any_of(path.begin(), path.end(),
                     [&](const Stmt& s) { return s.get() == ancestor && s.get() != node; });
}

int item_containing(const Stmt& body, const StmtNode* node) {
  std::vector<Stmt> items = seq_items(body);
  for (size_t i = 0; i < items.size(); ++i)
    if (!path_to(items[i], node).empty()) return int(i);
  return -1;
}

Stmt make_nest(const std::vector<LoopSpec>& loops, Stmt body) {
  for (size_t i = loops.size(); i-- > 0;)
    body = make_for(loops[i].var, loops[i].min, loops[i].extent, ForKind::kSerial, std::move(body));
  return body;
}

Analyzer analyzer_for(const std::vector<Stmt>& loops) {
  Analyzer analyzer;
  for (const Stmt& s : loops) {
    const ForNode& f = *s.as<ForNode>();
    analyzer.bind(f.var, Range{f.min, f.extent});
  }
  return analyzer;
}

std::string unique_block_name(const PrimFunc& func, const std::string& base) {
  std::string name = base;
  for (int i = 1; find_block(func, name).defined(); ++i) name = base + "_" + std::to_string(i);
  return name;
}

PrimFunc with_root_allocs(const PrimFunc& func, const std::vector<Buffer>& add, const BufferNode* remove) {
  const BlockNode* root = root_block(func);
  TESSEL_ICHECK(root) << "function " << func->name << " has no root block";
  BlockFields f = fields_of(*root);
  std::erase_if(f.alloc_buffers, [&](const Buffer& b) { return b.get() == remove; });
  f.alloc_buffers.insert(f.alloc_buffers.end(), add.begin(), add.end());
  return with_body(*func, make_block(std::move(f)));
}

PrimFunc insert_at_root(const PrimFunc& func, int index, const Stmt& stmt) {
  const BlockNode* root = root_block(func);
  TESSEL_ICHECK(root) << "function " << func->name << " has no root block";
  std::vector<Stmt> items = seq_items(root->body);
  if (const SeqNode* seq = root->body.as<SeqNode>(); seq && seq->stmts.empty()) items.clear();
  TESSEL_ICHECK(index >= 0 && index <= int(items.size())) << "root position " << index;
  items.insert(items.begin() + index, stmt);
  BlockFields f = fields_of(*root);
  f.body = make_seq(std::move(items));
  return with_body(*func, make_block(std::move(f)));
}

int root_item(const PrimFunc& func, const StmtNode* node) {
  const BlockNode* root = root_block(func);
  TESSEL_ICHECK(root) << "function " << func->name << " has no root block";
  return item_containing(root->body, node);
}

namespace {

bool same_index(const Expr& a, const Expr& b) {
  if (a.same_as(b)) return true;
  const int64_t *x = as_const_int(a), *y = as_const_int(b);
  return x && y && *x == *y;
}

bool same_indices(const std::vector<Expr>& a, const std::vector<Expr>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (!same_index(a[i], b[i])) return false;
  return true;
}

bool is_const_value(const Expr& e, double value) {
  if (const auto* f = e.as<FloatImmNode>()) return f->value == value;
  if (const auto* i = e.as<IntImmNode>()) return double(i->value) == value;
  return false;
}

// The accumulator load B[indices] when e is one.
bool is_accumulator(const Expr& e, const StoreNode& store) {
  const LoadNode* l = e.as<LoadNode>();
  return l && l->buffer.same_as(store.buffer) && same_indices(l->indices, store.indices);
}

}  // namespace

std::optional<ReductionPattern> match_reduction(const BlockNode& block) {
  if (!block.is_reduction() || !block.init.defined()) return std::nullopt;
  const StoreNode* init = block.init.as<StoreNode>();
  const StoreNode* update = block.body.as<StoreNode>();
  if (!init || !update || !init->buffer.same_as(update->buffer) ||
      !same_indices(init->indices, update->indices))
    return std::nullopt;
  const ExprNode& v = *update->value;
  std::optional<ReduceOp> op;
  switch (v.kind) {
    case ExprKind::kAdd: op = ReduceOp::kSum; break;
    case ExprKind::kMul: op = ReduceOp::kProd; break;
    case ExprKind::kMax: op = ReduceOp::kMax; break;
    case ExprKind::kMin: op = ReduceOp::kMin; break;
    default: return std::nullopt;
  }
  Expr value;
  if (is_accumulator(binary_a(v), *update))
    value = binary_b(v);
  else if (is_accumulator(binary_b(v), *update))
    value = binary_a(v);
  else
    return std::nullopt;
  bool reads_accumulator = false;
  walk_exprs(value, [&](const Expr& e) {
    if (const LoadNode* l = e.as<LoadNode>())
      reads_accumulator = reads_accumulator || l->buffer.same_as(update->buffer);
  });
  if (reads_accumulator) return std::nullopt;
  // Sum and product need their identity as init (rfactor applies it once per
  // partial result); max and min are idempotent, so any constant init is fine.
  if (*op == ReduceOp::kSum && !is_const_value(init->value, 0)) return std::nullopt;
  if (*op == ReduceOp::kProd && !is_const_value(init->value, 1)) return std::nullopt;
  if (init->value->kind != ExprKind::kIntImm && init->value->kind != ExprKind::kFloatImm) return std::nullopt;
  return ReductionPattern{*op, update->buffer, update->indices, init->value, value};
}

Expr combine(ReduceOp op, Expr acc, Expr value) {
  switch (op) {
    case ReduceOp::kSum: return add(std::move(acc), std::move(value));
    case ReduceOp::kProd: return mul(std::move(acc), std::move(value));
    case ReduceOp::kMax: return max(std::move(acc), std::move(value));
    case ReduceOp::kMin: return min(std::move(acc), std::move(value));
  }
  return {};
}

namespace {

bool shares_buffer(const std::vector<BufferRegion>& a, const std::vector<BufferRegion>& b) {
  return std::any_of(a.begin(), a.end(), [&](const BufferRegion& r) { return lists_buffer(b, r.buffer); });
}

bool conflicts(const BlockNode& x, const BlockNode& y) {
  return shares_buffer(x.writes, y.reads) || shares_buffer(x.reads, y.writes) ||
         shares_buffer(x.writes, y.writes);
}

// Names of the blocks before `name` in program order.
std::vector<std::string> names_before(const PrimFunc& func, const std::string& name) {
  std::vector<std::string> out;
  for (const Stmt& s : all_blocks(func)) {
    if (s.as<BlockNode>()->name == name) return out;
    out.push_back(s.as<BlockNode>()->name);
  }
  return out;
}

bool contains(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

}  // namespace

void check_dependences_kept(const PrimFunc& before, const PrimFunc& after, const std::string& block,
                            const std::string& primitive) {
  Stmt moved_stmt = find_block(after, block);
  const BlockNode* moved = moved_stmt.as<BlockNode>();
  TESSEL_ICHECK(moved) << "block " << block << " missing after " << primitive;
  std::vector<std::string> old_before = names_before(before, block), new_before = names_before(after, block);
  for (const Stmt& s : all_blocks(after)) {
    const BlockNode& other = *s.as<BlockNode>();
    if (other.name == block || !find_block(before, other.name).defined()) continue;
    if (contains(old_before, other.name) == contains(new_before, other.name) || !conflicts(*moved, other))
      continue;
    throw ScheduleError(primitive + ".dependence",
                        "moving block '" + block + "' would change its order relative to block '" +
                            other.name + "', which shares a buffer with it (one of them writing it)");
  }
}

}  // namespace tessel::sched
