// Detection of a block's access regions from its body.
#include "ir/tensor/access_region.h"

#include <algorithm>

#include "ir/tensor/functor.h"

namespace tessel::tir {

namespace {

bool contains_load(const Expr& e) {
  bool found = false;
  walk_exprs(e, [&](const Expr& x) { found = found || x->kind == ExprKind::kLoad; });
  return found;
}

// Structural identity of two index lists, cheap form: identical nodes or equal constants.
bool same_indices(const std::vector<Range>& a, const std::vector<Range>& b) {
  for (size_t i = 0; i < a.size(); ++i) {
    const int64_t *x = as_const_int(a[i].min), *y = as_const_int(b[i].min);
    bool same_min = a[i].min.same_as(b[i].min) || (x && y && *x == *y);
    if (!same_min || !a[i].extent.same_as(b[i].extent)) {
      const int64_t *ex = as_const_int(a[i].extent), *ey = as_const_int(b[i].extent);
      if (!same_min || !(ex && ey && *ex == *ey)) return false;
    }
  }
  return true;
}

std::vector<Range> point_region(const Buffer& buffer, const std::vector<Expr>& indices) {
  std::vector<Range> region;
  for (int d = 0; d < buffer->rank(); ++d) {
    if (contains_load(indices[d])) {
      region.push_back({int_imm(0), int_imm(buffer->shape[d])});
    } else {
      region.push_back({indices[d], int_imm(1)});
    }
  }
  return region;
}

class AccessCollector : public StmtVisitor {
 public:
  explicit AccessCollector(const std::vector<Buffer>& exclude) : exclude_(exclude) {}
  AccessRegions result;
  using StmtVisitor::visit;

 protected:
  void visit_load(const LoadNode& node) override {
    add(result.reads, node.buffer, node.indices);
    StmtVisitor::visit_load(node);
  }
  void visit_store(const StoreNode& node) override {
    add(result.writes, node.buffer, node.indices);
    StmtVisitor::visit_store(node);
  }
  void visit_block(const BlockNode& node) override {
    // A nested block contributes its declared regions, in its own variables
    // substituted by its bindings.
    VarMap bind;
    for (size_t i = 0; i < node.iter_vars.size(); ++i)
      bind[node.iter_vars[i].var.get()] = node.iter_values[i];
    for (const BufferRegion& r : node.reads) add_region(result.reads, r, bind);
    for (const BufferRegion& r : node.writes) add_region(result.writes, r, bind);
  }

 private:
  bool excluded(const Buffer& b) const {
    return std::any_of(exclude_.begin(), exclude_.end(), [&](const Buffer& x) { return x.same_as(b); });
  }
  void add_range_list(std::vector<BufferRegion>& list, const Buffer& buffer, std::vector<Range> region) {
    if (excluded(buffer)) return;
    for (const BufferRegion& r : list)
      if (r.buffer.same_as(buffer) && same_indices(r.region, region)) return;
    list.push_back({buffer, std::move(region)});
  }
  void add(std::vector<BufferRegion>& list, const Buffer& buffer, const std::vector<Expr>& indices) {
    add_range_list(list, buffer, point_region(buffer, indices));
  }
  void add_region(std::vector<BufferRegion>& list, const BufferRegion& r, const VarMap& bind) {
    std::vector<Range> region;
    for (const Range& range : r.region)
      region.push_back({substitute(range.min, bind), substitute(range.extent, bind)});
    add_range_list(list, r.buffer, std::move(region));
  }
  const std::vector<Buffer>& exclude_;
};

}  // namespace

AccessRegions detect_access_regions(const Stmt& init, const Stmt& body, const std::vector<Buffer>& exclude) {
  AccessCollector collector(exclude);
  collector.visit(init);
  collector.visit(body);
  return std::move(collector.result);
}

Block with_detected_regions(const BlockNode& block) {
  AccessRegions regions = detect_access_regions(block.init, block.body, block.alloc_buffers);
  return make_ref<BlockNode>(block.name, block.iter_vars, block.iter_values, block.predicate,
                             std::move(regions.reads), std::move(regions.writes), block.init, block.body,
                             block.alloc_buffers, block.annotations);
}

}  // namespace tessel::tir
