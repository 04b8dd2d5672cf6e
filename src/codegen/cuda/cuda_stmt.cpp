// Tensor IR statements as CUDA C. A thread-bound loop is its thread's index
// (the launch has exactly its extent of threads or blocks on that axis); the
// other loop kinds are C loops (parallel means nothing inside a GPU thread;
// unrolled asks the compiler to unroll; vectorized is a vector load and store
// where it copies aligned floats, cuda_vector.cpp, else a loop).
#include "ir/core/diagnostics.h"
#include "ir/tensor/simplify.h"
#include "src/codegen/cuda/cuda_printer.h"
#include "src/codegen/cuda/cuda_reduction.h"

namespace tessel::codegen::cuda_detail {

using namespace tir;

namespace {

// What a thread's own array may take: CUDA gives a thread 512 KiB of local
// memory, and the emulator runs each thread on a stack of its own.
constexpr int64_t kMaxThreadArrayBytes = 64 * 1024;

std::string pad(int indent) {
  return std::string(size_t(indent) * 2, ' ');
}

std::string to_storage(DType t, const std::string& v) {
  switch (t) {
    case DType::kF16: return "tessel_f2h(" + v + ")";
    case DType::kBF16: return "tessel_f2bf(" + v + ")";
    case DType::kBool: return "(tessel_u8)" + v;
    default: return v;
  }
}

}  // namespace

void CudaPrinter::stmt(const Stmt& s, int indent, std::ostream& os) {
  switch (s->kind) {
    case StmtKind::kFor: return loop(static_cast<const ForNode&>(*s), indent, os);
    case StmtKind::kStore: return store(static_cast<const StoreNode&>(*s), indent, os);
    case StmtKind::kAllocate: return allocate(static_cast<const AllocateNode&>(*s), indent, os);
    case StmtKind::kIfThenElse: {
      const auto& n = static_cast<const IfThenElseNode&>(*s);
      os << pad(indent) << "if (" << expr(n.cond) << ") {\n";
      stmt(n.then_case, indent + 1, os);
      if (n.else_case.defined()) {
        os << pad(indent) << "} else {\n";
        stmt(n.else_case, indent + 1, os);
      }
      os << pad(indent) << "}\n";
      return;
    }
    case StmtKind::kSeq:
      for (const Stmt& c : static_cast<const SeqNode&>(*s).stmts) stmt(c, indent, os);
      return;
    case StmtKind::kBarrier: os << pad(indent) << "__syncthreads();\n"; return;
    case StmtKind::kAssert: return assertion(static_cast<const AssertNode&>(*s), indent, os);
    case StmtKind::kPrefetch: return;  // a CPU cache hint
    case StmtKind::kBlock: TESSEL_ICHECK(false) << "CUDA codegen takes flattened functions (a block remains)";
  }
}

void CudaPrinter::loop(const ForNode& n, int indent, std::ostream& os) {
  std::string v = names_.var(n.var.get());
  ranges_.bind(n.var, Range{n.min, n.extent});
  if (n.for_kind == ForKind::kThreadBound) {
    std::string index = "(tessel_i64)" + n.thread_tag;
    const int64_t* min = as_const_int(n.min);
    if (!min || *min != 0) index = "(" + expr(n.min) + " + " + index + ")";
    os << pad(indent) << "{\n" << pad(indent + 1) << "const tessel_i64 " << v << " = " << index << ";\n";
    thread_loops_ += is_thread_idx(n.thread_tag);
    if (auto it = reduction_scratch_.find(&n); it != reduction_scratch_.end())
      reduction(n, it->second, indent + 1, os);
    else
      stmt(n.body, indent + 1, os);
    thread_loops_ -= is_thread_idx(n.thread_tag);
    os << pad(indent) << "}\n";
    return;
  }
  if (n.for_kind == ForKind::kVectorized && vector_copy(n, indent, os)) return;
  if (n.for_kind == ForKind::kUnrolled) os << pad(indent) << "#pragma unroll\n";
  const int64_t* min = as_const_int(n.min);
  std::string end = min && *min == 0 ? expr(n.extent) : expr(simplify(n.min + n.extent));
  os << pad(indent) << "for (tessel_i64 " << v << " = " << expr(n.min) << "; " << v << " < " << end << "; ++"
     << v << ") {\n";
  stmt(n.body, indent + 1, os);
  os << pad(indent) << "}\n";
}

// Each thread combines its iterations in a register, the block combines the
// registers, thread 0 adds the result to the output.
void CudaPrinter::reduction(const ForNode& n, int64_t scratch_offset, int indent, std::ostream& os) {
  CrossThreadReduction r = *cross_thread_reduction(n);
  DType dtype = r.store->buffer->dtype;
  std::string type = c_type(dtype), acc = names_.fresh("tessel_acc");
  os << pad(indent) << type << " " << acc << " = " << reduce_identity(r.op) << ";\n";
  reducing_store_ = r.store;
  reducing_acc_ = acc;
  reducing_operand_ = r.operand;
  stmt(n.body, indent, os);
  reducing_store_ = nullptr;
  os << pad(indent) << acc << " = " << block_reduce_function(r.op, dtype) << "(TESSEL_THREAD_ARG " << acc
     << ", (" << type << "*)(tessel_shared + " << scratch_offset << "), " << *as_const_int(n.extent)
     << "u);\n";
  std::string target =
      names_.buffer(r.store->buffer.get()) + "[" + offset(*r.store->buffer, r.store->indices) + "]";
  os << pad(indent) << "if (" << n.thread_tag << " == 0) " << target << " = "
     << float_binary(*r.store->value, target, acc) << ";\n";
}

void CudaPrinter::store(const StoreNode& n, int indent, std::ostream& os) {
  if (&n == reducing_store_) {
    os << pad(indent) << reducing_acc_ << " = "
       << float_binary(*n.value, reducing_acc_, expr(reducing_operand_)) << ";\n";
    return;
  }
  os << pad(indent) << names_.buffer(n.buffer.get()) << "[" << offset(*n.buffer, n.indices)
     << "] = " << to_storage(n.buffer->dtype, expr(n.value)) << ";\n";
}

// Local buffers (and global ones a schedule placed inside a kernel: one copy
// per thread, as the interpreter keeps them outside barriers) are arrays of
// the thread; shared ones are views of the block's arena.
void CudaPrinter::allocate(const AllocateNode& n, int indent, std::ostream& os) {
  const BufferNode& b = *n.buffer;
  std::string type = c_storage_type(b.dtype), name = names_.buffer(&b);
  if (b.scope == MemScope::kShared) {
    auto it = shared_offsets_.find(&b);
    TESSEL_ICHECK(it != shared_offsets_.end()) << "shared buffer " << b.name << " has no place in the arena";
    os << pad(indent) << type << "* " << name << " = (" << type << "*)(tessel_shared + " << it->second
       << ");\n";
  } else {
    // Each thread's own array: right for local buffers, and for global ones
    // inside the thread loops (or in a one-thread block); elsewhere a global
    // buffer is the block's, which only shared memory could be.
    TESSEL_USER_CHECK(b.scope == MemScope::kLocal || thread_loops_ > 0 || threads_per_block_ == 1, Span{})
        << "cannot generate CUDA C: global buffer " << b.name
        << " is allocated inside a kernel, outside its thread loops (stage it in shared memory instead)";
    int64_t bytes = std::max<int64_t>(1, b.storage_elements()) * c_storage_bytes(b.dtype);
    TESSEL_USER_CHECK(bytes <= kMaxThreadArrayBytes, Span{})
        << "cannot generate CUDA C: buffer " << b.name << " would be an array of " << bytes
        << " bytes per thread (at most " << kMaxThreadArrayBytes << ")";
    os << pad(indent) << type << " " << name << "[" << std::max<int64_t>(1, b.storage_elements()) << "];\n";
  }
  stmt(n.body, indent, os);
}

void CudaPrinter::assertion(const AssertNode& n, int indent, std::ostream& os) {
  int id = int(asserts_.size());
  asserts_.push_back({n.message, int(n.values.size())});
  os << pad(indent) << "if (!" << expr(n.cond) << ") {\n"
     << pad(indent + 1) << "tessel_fail(tessel_err, " << id;
  for (size_t i = 0; i < AssertNode::kMaxAssertValues; ++i)
    os << ", " << (i < n.values.size() ? "(tessel_i64)" + expr(n.values[i]) : std::string("0LL"));
  os << ");\n" << pad(indent + 1) << "return;\n" << pad(indent) << "}\n";
}

}  // namespace tessel::codegen::cuda_detail
