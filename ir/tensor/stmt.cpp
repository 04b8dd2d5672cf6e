// Builders and names of tensor IR statements.
#include "ir/tensor/stmt.h"

#include "ir/core/diagnostics.h"

namespace tessel::tir {

std::string_view stmt_kind_name(StmtKind kind) {
  switch (kind) {
    case StmtKind::kFor: return "For";
    case StmtKind::kStore: return "Store";
    case StmtKind::kAllocate: return "Allocate";
    case StmtKind::kIfThenElse: return "IfThenElse";
    case StmtKind::kSeq: return "Seq";
    case StmtKind::kBarrier: return "Barrier";
    case StmtKind::kBlock: return "Block";
    case StmtKind::kAssert: return "Assert";
    case StmtKind::kPrefetch: return "Prefetch";
  }
  return "?";
}

std::string_view for_kind_name(ForKind kind) {
  switch (kind) {
    case ForKind::kSerial: return "serial";
    case ForKind::kParallel: return "parallel";
    case ForKind::kVectorized: return "vectorized";
    case ForKind::kUnrolled: return "unrolled";
    case ForKind::kThreadBound: return "thread_bound";
  }
  return "?";
}

std::string_view iter_kind_name(IterKind kind) {
  return kind == IterKind::kSpatial ? "spatial" : "reduce";
}

bool is_thread_tag(std::string_view tag) {
  for (std::string_view t : kThreadTags)
    if (t == tag) return true;
  return false;
}
bool is_block_idx(std::string_view tag) {
  return is_thread_tag(tag) && tag.starts_with("blockIdx.");
}
bool is_thread_idx(std::string_view tag) {
  return is_thread_tag(tag) && tag.starts_with("threadIdx.");
}

bool BlockNode::is_reduction() const {
  for (const IterVar& iv : iter_vars)
    if (iv.kind == IterKind::kReduce) return true;
  return false;
}

Stmt make_for(Var var, Expr min, Expr extent, ForKind kind, Stmt body, std::string thread_tag,
              Annotations annotations) {
  TESSEL_ICHECK(var.defined() && min.defined() && extent.defined() && body.defined()) << "incomplete For";
  TESSEL_ICHECK(var->dtype == kIndexType && min->dtype == kIndexType && extent->dtype == kIndexType)
      << "loop " << var->name << " is not i64";
  TESSEL_ICHECK((kind == ForKind::kThreadBound) == !thread_tag.empty())
      << "loop " << var->name << ": a thread tag goes with kind thread_bound";
  TESSEL_ICHECK(thread_tag.empty() || is_thread_tag(thread_tag)) << "unknown thread tag " << thread_tag;
  return make_ref<ForNode>(std::move(var), std::move(min), std::move(extent), kind, std::move(thread_tag),
                           std::move(annotations), std::move(body));
}

Stmt make_store(Buffer buffer, Expr value, std::vector<Expr> indices) {
  TESSEL_ICHECK(int(indices.size()) == buffer->rank())
      << "store to " << buffer->name << " with " << indices.size() << " indices, rank " << buffer->rank();
  TESSEL_ICHECK(value.defined() && value->dtype == buffer->dtype)
      << "store of " << (value.defined() ? dtype_name(value->dtype) : "nothing") << " to " << buffer->name;
  return make_ref<StoreNode>(std::move(buffer), std::move(value), std::move(indices));
}

Stmt make_allocate(Buffer buffer, Stmt body) {
  return make_ref<AllocateNode>(std::move(buffer), std::move(body));
}

Stmt make_if(Expr cond, Stmt then_case, Stmt else_case) {
  TESSEL_ICHECK(cond.defined() && cond->dtype == DType::kBool) << "if condition must be bool";
  return make_ref<IfThenElseNode>(std::move(cond), std::move(then_case), std::move(else_case));
}

Stmt make_seq(std::vector<Stmt> stmts) {
  std::vector<Stmt> flat;
  for (Stmt& s : stmts) {
    if (!s.defined()) continue;
    if (const SeqNode* seq = s.as<SeqNode>()) {
      flat.insert(flat.end(), seq->stmts.begin(), seq->stmts.end());
    } else {
      flat.push_back(std::move(s));
    }
  }
  if (flat.size() == 1) return flat[0];
  return make_ref<SeqNode>(std::move(flat));
}

Stmt make_barrier() {
  return make_ref<BarrierNode>();
}

Stmt make_assert(Expr cond, std::string message, std::vector<Expr> values) {
  TESSEL_ICHECK(cond.defined() && cond->dtype == DType::kBool) << "assert condition must be bool";
  TESSEL_ICHECK(values.size() <= AssertNode::kMaxAssertValues)
      << "assert with " << values.size() << " values";
  for (const Expr& v : values)
    TESSEL_ICHECK(v.defined() && is_integer(v->dtype)) << "assert values are integers: " << message;
  return make_ref<AssertNode>(std::move(cond), std::move(message), std::move(values));
}

Stmt make_prefetch(Buffer buffer, Expr offset, int64_t lines) {
  TESSEL_ICHECK(buffer.defined() && offset.defined() && offset->dtype == kIndexType)
      << "prefetch needs a buffer and an index offset";
  TESSEL_ICHECK(lines > 0) << "prefetch of " << lines << " lines";
  return make_ref<PrefetchNode>(std::move(buffer), std::move(offset), lines);
}

std::string format_assert_message(std::string_view message, const std::vector<int64_t>& values) {
  std::string out;
  size_t next = 0;
  for (size_t i = 0; i < message.size(); ++i) {
    if (message.compare(i, 2, "{}") == 0 && next < values.size()) {
      out += std::to_string(values[next++]);
      ++i;
      continue;
    }
    out += message[i];
  }
  return out;
}

Stmt with_body(const ForNode& loop, Stmt body) {
  return make_for(loop.var, loop.min, loop.extent, loop.for_kind, std::move(body), loop.thread_tag,
                  loop.annotations);
}

Stmt with_kind(const ForNode& loop, ForKind kind, std::string thread_tag) {
  return make_for(loop.var, loop.min, loop.extent, kind, loop.body, std::move(thread_tag), loop.annotations);
}

}  // namespace tessel::tir
