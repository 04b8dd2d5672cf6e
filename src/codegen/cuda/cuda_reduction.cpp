// Recognising a cross-thread reduction in a threadIdx loop.
#include "src/codegen/cuda/cuda_reduction.h"

#include <set>
#include <utility>

#include "ir/core/diagnostics.h"
#include "ir/tensor/functor.h"
#include "ir/tensor/structural.h"

namespace tessel::codegen::cuda_detail {

using namespace tir;

namespace {

bool uses_any(const Expr& e, const std::set<const VarNode*>& vars) {
  bool found = false;
  walk_exprs(e, [&](const Expr& x) {
    if (const auto* v = x.as<VarNode>(); v && vars.count(v)) found = true;
  });
  return found;
}

// The one store under serial loops and guards without else, collecting the loops' variables; null otherwise.
const StoreNode* single_store(const Stmt& s, std::set<const VarNode*>& vars) {
  if (const auto* f = s.as<ForNode>()) {
    if (f->for_kind != ForKind::kSerial && f->for_kind != ForKind::kUnrolled) return nullptr;
    vars.insert(f->var.get());
    return single_store(f->body, vars);
  }
  if (const auto* i = s.as<IfThenElseNode>())
    return i->else_case.defined() ? nullptr : single_store(i->then_case, vars);
  return s.as<StoreNode>();
}

// The operands of an Add, Mul, Max or Min node; nullopt for any other expression.
std::optional<std::pair<Expr, Expr>> combined_operands(const Expr& e) {
  switch (e->kind) {
    case ExprKind::kAdd:
      return std::pair{static_cast<const AddNode&>(*e).a, static_cast<const AddNode&>(*e).b};
    case ExprKind::kMul:
      return std::pair{static_cast<const MulNode&>(*e).a, static_cast<const MulNode&>(*e).b};
    case ExprKind::kMax:
      return std::pair{static_cast<const MaxNode&>(*e).a, static_cast<const MaxNode&>(*e).b};
    case ExprKind::kMin:
      return std::pair{static_cast<const MinNode&>(*e).a, static_cast<const MinNode&>(*e).b};
    default: return std::nullopt;
  }
}

// Whether e loads exactly what store writes.
bool reads_target(const Expr& e, const StoreNode& store) {
  const auto* load = e.as<LoadNode>();
  if (!load || load->buffer.get() != store.buffer.get() || load->indices.size() != store.indices.size())
    return false;
  for (size_t i = 0; i < store.indices.size(); ++i)
    if (!structural_equal(load->indices[i], store.indices[i])) return false;
  return true;
}

}  // namespace

std::optional<CrossThreadReduction> cross_thread_reduction(const ForNode& loop) {
  if (loop.for_kind != ForKind::kThreadBound || loop.thread_tag.rfind("threadIdx", 0) != 0)
    return std::nullopt;
  if (is_const_int(loop.extent, 1)) return std::nullopt;  // one thread: nothing to combine, nothing to race
  std::set<const VarNode*> inner{loop.var.get()};
  const StoreNode* store = single_store(loop.body, inner);
  bool invariant = store && store->buffer->scope != MemScope::kLocal;
  for (size_t i = 0; invariant && i < store->indices.size(); ++i)
    invariant = !uses_any(store->indices[i], inner);
  if (!invariant) return std::nullopt;
  // X[I] = X[I] op e, or e op X[I], with e not reading X.
  std::optional<std::pair<Expr, Expr>> operands = combined_operands(store->value);
  std::optional<CrossThreadReduction> found;
  if (operands && reads_target(operands->first, *store))
    found = CrossThreadReduction{store, store->value->kind, operands->second};
  if (operands && reads_target(operands->second, *store))
    found = CrossThreadReduction{store, store->value->kind, operands->first};
  bool operand_reads_target = false;
  if (found) {
    walk_exprs(found->operand, [&](const Expr& e) {
      if (const auto* l = e.as<LoadNode>(); l && l->buffer.get() == store->buffer.get())
        operand_reads_target = true;
    });
  }
  if (operand_reads_target) found.reset();
  TESSEL_ICHECK(found) << "every thread of " << loop.var->name << " (" << loop.thread_tag << ") writes "
                       << store->buffer->name << " at one place, and not as a reduction: a race";
  TESSEL_ICHECK(store->buffer->dtype == DType::kF32 || store->buffer->dtype == DType::kF64)
      << "a reduction across threads into " << store->buffer->name << " of "
      << dtype_name(store->buffer->dtype) << ": only f32 and f64 are combined across threads";
  return found;
}

std::string block_reduce_function(ExprKind op, DType dtype) {
  std::string name = op == ExprKind::kAdd   ? "add"
                     : op == ExprKind::kMul ? "mul"
                     : op == ExprKind::kMax ? "max"
                                            : "min";
  std::string type = dtype == DType::kF64 ? "f64" : "f32";
  return "tessel_block_" + name + "_" + type;
}

std::string reduce_identity(ExprKind op) {
  switch (op) {
    case ExprKind::kAdd: return "0.0";
    case ExprKind::kMul: return "1.0";
    case ExprKind::kMax: return "-tessel_f64_from_bits(0x7ff0000000000000ULL)";
    default: return "tessel_f64_from_bits(0x7ff0000000000000ULL)";
  }
}

int64_t block_reduce_scratch_bytes(int64_t threads) {
  return threads * 8;
}

}  // namespace tessel::codegen::cuda_detail
