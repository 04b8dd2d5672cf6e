#include "tuner/features/features.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>

#include "ir/core/diagnostics.h"
#include "ir/tensor/functor.h"
#include "ir/tensor/simplify.h"

namespace tessel::tune {

namespace {

using tir::ExprKind;

constexpr size_t kAccessSlots = 4;  // the accesses of a store described, the most distinct bytes first

const char* const kStoreHead[] = {"iterations",  "float_add",   "float_mul", "float_div",  "float_math",
                                  "float_cmp",   "int_ops",     "casts",     "loads",      "vector_lanes",
                                  "vectorized",  "unrolled",    "parallel",  "loop_depth", "innermost_extent",
                                  "local_store", "gpu_threads", "gpu_blocks"};
const char* const kAccess[] = {"bytes",     "unique_bytes", "stride", "unit_stride",
                               "no_stride", "local",        "shared"};
const char* const kProgram[] = {"flops",
                                "bytes",
                                "intensity",
                                "stores",
                                "local_alloc_bytes",
                                "global_alloc_bytes",
                                "prefetch_bytes",
                                "shared_alloc_bytes"};
constexpr size_t kStoreFeatures = std::size(kStoreHead) + kAccessSlots * std::size(kAccess);

struct Loop {
  const tir::VarNode* var;
  int64_t extent;
  tir::ForKind kind;
  std::string_view thread_tag;
};

struct Access {
  tir::Buffer buffer;
  const std::vector<tir::Expr>* indices;
};

int64_t const_extent(const tir::Expr& e) {
  const auto* imm = e.as<tir::IntImmNode>();
  return imm ? std::max<int64_t>(imm->value, 0) : 1;
}

// The element offset of an access with every loop variable at 0 but `moved`
// at 1 (none: all at 0); nothing when an index is not then a constant.
std::optional<int64_t> offset_at(const Access& a, const std::vector<Loop>& loops, const tir::VarNode* moved) {
  tir::VarMap at;
  for (const Loop& l : loops) at[l.var] = tir::int_imm(l.var == moved ? 1 : 0);
  return tir::constant_offset(a.buffer, *a.indices, at);
}

class Extractor {
 public:
  std::vector<std::vector<double>> stores;
  double local_alloc = 0, global_alloc = 0, shared_alloc = 0;
  double prefetch_bytes = 0;  // asked for ahead, over every iteration of the loops around

  void visit(const tir::Stmt& s) {
    tir::walk(s, [&](const tir::Stmt& x) {
      if (const auto* f = x.as<tir::ForNode>()) {
        loops_.push_back({f->var.get(), const_extent(f->extent), f->for_kind, f->thread_tag});
        visit(f->body);
        loops_.pop_back();
        return false;
      }
      if (const auto* st = x.as<tir::StoreNode>()) {
        stores.push_back(describe(*st));
        return false;
      }
      if (const auto* p = x.as<tir::PrefetchNode>()) {
        double iterations = 1;
        for (const Loop& l : loops_) iterations *= double(l.extent);
        prefetch_bytes += iterations * double(p->lines * tir::PrefetchNode::kLineBytes);
        return false;
      }
      if (const auto* a = x.as<tir::AllocateNode>()) {
        double bytes = double(a->buffer->storage_elements()) * double(dtype_size(a->buffer->dtype));
        tir::MemScope scope = a->buffer->scope;
        (scope == tir::MemScope::kLocal    ? local_alloc
         : scope == tir::MemScope::kShared ? shared_alloc
                                           : global_alloc) += bytes;
      }
      return true;
    });
  }

 private:
  std::vector<double> describe(const tir::StoreNode& store) {
    double iterations = 1, vectorized = 1, unrolled = 1, parallel = 1, lanes = 1, innermost = 1;
    // A GPU launch's threads per block and blocks: a tag bound again inside
    // its loop (a cooperative fetch's) names the same threads.
    std::map<std::string_view, double> bound;
    for (const Loop& l : loops_) {
      iterations *= double(l.extent);
      if (l.kind == tir::ForKind::kThreadBound)
        bound[l.thread_tag] = std::max(bound[l.thread_tag], double(l.extent));
      if (l.kind == tir::ForKind::kVectorized) vectorized *= double(l.extent), lanes = double(l.extent);
      if (l.kind == tir::ForKind::kUnrolled) unrolled *= double(l.extent);
      if (l.kind == tir::ForKind::kParallel) parallel *= double(l.extent);
    }
    double threads = 1, blocks = 1;
    for (auto [tag, extent] : bound) (tir::is_thread_idx(tag) ? threads : blocks) *= extent;
    if (!loops_.empty()) innermost = double(loops_.back().extent);
    double counts[8] = {};  // float add, mul, div, math, cmp; int ops; casts; loads
    std::vector<Access> accesses = {{store.buffer, &store.indices}};
    tir::walk_exprs(store.value, [&](const tir::Expr& e) {
      bool is_float_op = tir::is_binary(e->kind) && is_float(tir::binary_a(*e)->dtype);
      switch (e->kind) {
        case ExprKind::kAdd:
        case ExprKind::kSub: counts[is_float_op ? 0 : 5] += 1; break;
        case ExprKind::kMul: counts[is_float_op ? 1 : 5] += 1; break;
        case ExprKind::kDiv: counts[is_float_op ? 2 : 5] += 1; break;
        case ExprKind::kCall: counts[3] += 1; break;
        case ExprKind::kSelect: counts[4] += 1; break;
        case ExprKind::kCast: counts[6] += 1; break;
        case ExprKind::kLoad: {
          const auto& load = static_cast<const tir::LoadNode&>(*e);
          counts[7] += 1;
          accesses.push_back({load.buffer, &load.indices});
          break;
        }
        default:
          if (tir::is_binary(e->kind)) counts[is_float_op ? 4 : 5] += 1;
      }
    });
    std::vector<double> out = {iterations};
    for (double c : counts) out.push_back(c * iterations);
    out.insert(out.end(), {lanes, vectorized, unrolled, parallel, double(loops_.size()), innermost,
                           store.buffer->scope == tir::MemScope::kLocal ? 1.0 : 0.0, threads, blocks});
    std::vector<std::vector<double>> described;
    for (const Access& a : accesses) described.push_back(describe(a, iterations));
    std::stable_sort(described.begin(), described.end(),
                     [](const std::vector<double>& x, const std::vector<double>& y) { return x[1] > y[1]; });
    described.resize(kAccessSlots, std::vector<double>(std::size(kAccess), 0.0));
    for (const std::vector<double>& d : described) out.insert(out.end(), d.begin(), d.end());
    return out;
  }

  // bytes, unique bytes, |stride| along the innermost loop that moves, unit, none, local, shared.
  std::vector<double> describe(const Access& a, double iterations) const {
    double size = double(dtype_size(a.buffer->dtype)), distinct = 1;
    const tir::VarNode* innermost = nullptr;
    for (const Loop& l : loops_) {
      bool moves = false;
      for (const tir::Expr& index : *a.indices) moves = moves || tir::uses_var(index, l.var);
      if (moves) distinct *= double(l.extent);
      if (l.extent > 1) innermost = l.var;
    }
    distinct = std::min(distinct, double(a.buffer->storage_elements()));
    double stride = 0;
    if (innermost) {
      std::optional<int64_t> x = offset_at(a, loops_, nullptr), y = offset_at(a, loops_, innermost);
      stride = x && y ? std::abs(double(*y - *x)) : double(a.buffer->storage_elements());  // unknown: as far as it gets
    }
    return {iterations * size,
            distinct * size,
            stride,
            stride == 1 ? 1.0 : 0.0,
            stride == 0 ? 1.0 : 0.0,
            a.buffer->scope == tir::MemScope::kLocal ? 1.0 : 0.0,
            a.buffer->scope == tir::MemScope::kShared ? 1.0 : 0.0};
  }

  std::vector<Loop> loops_;
};

double log_scaled(double x) { return std::log2(1.0 + std::max(x, 0.0)); }

}  // namespace

const std::vector<std::string>& store_feature_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n(std::begin(kStoreHead), std::end(kStoreHead));
    for (size_t slot = 0; slot < kAccessSlots; ++slot)
      for (const char* a : kAccess) n.push_back("access" + std::to_string(slot) + "." + a);
    return n;
  }();
  return names;
}

const std::vector<std::string>& feature_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n;
    for (const char* pool : {"sum.", "max."})
      for (const std::string& s : store_feature_names()) n.push_back(pool + s);
    for (const char* p : kProgram) n.push_back(std::string("program.") + p);
    return n;
  }();
  return names;
}

size_t feature_count() { return feature_names().size(); }

std::vector<std::vector<double>> store_features(const tir::PrimFunc& f) {
  Extractor e;
  e.visit(f->body);
  return e.stores;
}

std::vector<float> extract_features(const tir::PrimFunc& f) {
  Extractor e;
  e.visit(f->body);
  std::vector<double> sum(kStoreFeatures, 0.0), max(kStoreFeatures, 0.0);
  double flops = 0, bytes = 0;
  for (const std::vector<double>& s : e.stores) {
    TESSEL_ICHECK(s.size() == kStoreFeatures) << "a store described by " << s.size() << " features";
    for (size_t i = 0; i < kStoreFeatures; ++i) sum[i] += s[i], max[i] = std::max(max[i], s[i]);
    flops += s[1] + s[2] + s[3] + s[4] + s[5];
    for (size_t slot = 0; slot < kAccessSlots; ++slot) bytes += s[std::size(kStoreHead) + slot * std::size(kAccess) + 1];
  }
  std::vector<float> out;
  out.reserve(feature_count());
  for (const std::vector<double>* pool : {&sum, &max})
    for (double v : *pool) out.push_back(float(log_scaled(v)));
  for (double v : {flops, bytes, bytes > 0 ? flops / bytes : 0.0, double(e.stores.size()), e.local_alloc,
                   e.global_alloc, e.prefetch_bytes, e.shared_alloc})
    out.push_back(float(log_scaled(v)));
  return out;
}

}  // namespace tessel::tune
