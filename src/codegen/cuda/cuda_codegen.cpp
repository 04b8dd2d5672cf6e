// generate_cuda: a function's top-level nests become launches, each a
// __global__ kernel printed by CudaPrinter; then, for the emulator, a host
// entry per function that runs its launches in order (cuda_prelude.cpp).
#include "src/codegen/cuda/cuda_codegen.h"

#include <algorithm>
#include <set>
#include <sstream>

#include "ir/core/diagnostics.h"
#include "ir/tensor/functor.h"
#include "src/codegen/cuda/cuda_prelude.h"
#include "src/codegen/cuda/cuda_printer.h"
#include "src/codegen/cuda/cuda_reduction.h"

namespace tessel::codegen {

using namespace tir;
using cuda_detail::CNames;
using cuda_detail::CudaPrinter;

namespace {

constexpr int64_t kScratchAlignment = 64;
constexpr int64_t kSharedAlignment = 16;
constexpr int64_t kMaxGridX = (int64_t(1) << 31) - 1, kMaxGridYZ = 65535;

int64_t storage_bytes(const BufferNode& b) {
  return std::max<int64_t>(1, b.storage_elements()) * cuda_detail::c_storage_bytes(b.dtype);
}

int64_t align_up(int64_t x, int64_t a) {
  return (x + a - 1) / a * a;
}

// The function body split at its top level: global allocations there are
// scratch shared by the launches; every other statement is one launch.
void split_top_level(const Stmt& s, std::vector<Buffer>& scratch, std::vector<Stmt>& launches) {
  if (const auto* seq = s.as<SeqNode>()) {
    for (const Stmt& c : seq->stmts) split_top_level(c, scratch, launches);
    return;
  }
  if (const auto* a = s.as<AllocateNode>(); a && a->buffer->scope == MemScope::kGlobal) {
    scratch.push_back(a->buffer);
    split_top_level(a->body, scratch, launches);
    return;
  }
  launches.push_back(s);
}

int tag_axis(const std::string& tag) {
  return tag.back() - 'x';
}

// Grid and block from the bound loops, shared arena offsets, barriers, and
// the buffers the launch reads or writes (in first-use order).
CudaLaunch describe_launch(const std::string& symbol, const Stmt& body, const GpuTarget& gpu,
                           const std::vector<Buffer>& visible, CudaPrinter& printer) {
  CudaLaunch launch;
  launch.kernel = symbol;
  std::set<std::string> seen_tags;
  walk(body, [&](const Stmt& s) {
    if (const auto* loop = s.as<ForNode>(); loop && loop->for_kind == ForKind::kThreadBound) {
      const int64_t* extent = as_const_int(loop->extent);
      TESSEL_USER_CHECK(extent != nullptr, Span{})
          << symbol << ": the loop " << loop->var->name << " bound to " << loop->thread_tag
          << " has no constant extent";
      int64_t* dims = is_block_idx(loop->thread_tag) ? launch.grid : launch.block;
      int axis = tag_axis(loop->thread_tag);
      TESSEL_USER_CHECK(!seen_tags.count(loop->thread_tag) || dims[axis] == *extent, Span{})
          << symbol << ": two loops bound to " << loop->thread_tag << " with extents " << dims[axis]
          << " and " << *extent;
      seen_tags.insert(loop->thread_tag);
      dims[axis] = *extent;
      if (cuda_detail::cross_thread_reduction(*loop)) {
        TESSEL_USER_CHECK(loop->thread_tag == "threadIdx.x" && *extent % 32 == 0, Span{})
            << symbol << ": a reduction across threads needs them on threadIdx.x, a multiple of 32 of them; "
            << loop->var->name << " has " << *extent << " on " << loop->thread_tag;
        launch.shared_bytes = align_up(launch.shared_bytes, kSharedAlignment);
        printer.set_reduction_scratch(loop, launch.shared_bytes);
        launch.shared_bytes += cuda_detail::block_reduce_scratch_bytes(*extent);
        launch.has_barrier = true;
      }
    } else if (const auto* a = s.as<AllocateNode>(); a && a->buffer->scope == MemScope::kShared) {
      launch.shared_bytes = align_up(launch.shared_bytes, kSharedAlignment);
      printer.set_shared_offset(a->buffer.get(), launch.shared_bytes);
      launch.shared_bytes += storage_bytes(*a->buffer);
    } else if (s->kind == StmtKind::kBarrier) {
      launch.has_barrier = true;
    }
    return true;
  });
  int64_t threads = launch.block[0] * launch.block[1] * launch.block[2];
  printer.set_threads_per_block(threads);
  TESSEL_USER_CHECK(threads <= gpu.max_threads_per_block, Span{})
      << symbol << ": a thread block of " << threads << " threads; sm_" << gpu.sm << " runs at most "
      << gpu.max_threads_per_block;
  TESSEL_USER_CHECK(launch.shared_bytes <= gpu.shared_bytes_per_block, Span{})
      << symbol << ": the kernel needs " << launch.shared_bytes << " bytes of shared memory per block; sm_"
      << gpu.sm << " gives a block " << gpu.shared_bytes_per_block;
  TESSEL_USER_CHECK(
      launch.grid[0] <= kMaxGridX && launch.grid[1] <= kMaxGridYZ && launch.grid[2] <= kMaxGridYZ, Span{})
      << symbol << ": a grid of " << launch.grid[0] << " x " << launch.grid[1] << " x " << launch.grid[2]
      << " blocks is larger than CUDA launches";
  std::set<const BufferNode*> used;
  walk_exprs(body, [&](const Expr& e) {
    if (const auto* l = e.as<LoadNode>()) used.insert(l->buffer.get());
  });
  walk(body, [&](const Stmt& s) {
    if (const auto* st = s.as<StoreNode>()) used.insert(st->buffer.get());
    return true;
  });
  for (const Buffer& b : visible)
    if (used.count(b.get())) launch.buffers.push_back(b);
  return launch;
}

bool writes(const Stmt& body, const BufferNode* buffer) {
  bool found = false;
  walk(body, [&](const Stmt& s) {
    if (const auto* st = s.as<StoreNode>(); st && st->buffer.get() == buffer) found = true;
    return !found;
  });
  return found;
}

void emit_kernel(const CudaLaunch& launch, const Stmt& body, CNames& names, CudaPrinter& printer,
                 std::ostream& os) {
  os << "TESSEL_KERNEL " << launch.kernel << "(TESSEL_THREAD_PARAM ";
  for (const Buffer& b : launch.buffers) {
    bool out = writes(body, b.get());
    os << (out ? "" : "const ") << cuda_detail::c_storage_type(b->dtype) << "* TESSEL_RESTRICT "
       << names.buffer(b.get()) << ", ";
  }
  os << "tessel_error* TESSEL_RESTRICT tessel_err) {\n";
  if (launch.shared_bytes > 0) os << "  TESSEL_SHARED_ARENA\n";
  printer.stmt(body, 1, os);
  os << "}\n\n";
}

// Under emulation, each launch's thread entry for the launcher: the kernel
// on the launch's parameters, given as cuLaunchKernel takes them.
void emit_thread_entry(const CudaLaunch& l, std::ostream& os) {
  os << "static void " << l.kernel << "_thread(const tessel_emu_thread* self, void* closure) {\n"
     << "  void* const* p = (void* const*)closure;\n  " << l.kernel << "(self, ";
  for (size_t i = 0; i < l.buffers.size(); ++i)
    os << "*(" << cuda_detail::c_storage_type(l.buffers[i]->dtype) << "* const*)p[" << i << "], ";
  os << "*(tessel_error* const*)p[" << l.buffers.size() << "]);\n}\n\n";
}

// Where a launch's buffer lives: a parameter of its function or its scratch.
rt::GpuArg launch_arg(const CudaFunction& f, const Buffer& b) {
  for (size_t i = 0; i < f.params.size(); ++i)
    if (f.params[i].get() == b.get()) return {rt::GpuArg::Kind::kParam, i};
  for (size_t i = 0; i < f.scratch.size(); ++i)
    if (f.scratch[i].get() == b.get()) return {rt::GpuArg::Kind::kScratch, uint64_t(f.scratch_offsets[i])};
  TESSEL_ICHECK(false) << "launch buffer " << b->name << " is neither a parameter nor scratch of "
                       << f.symbol;
  return {};
}

}  // namespace

CudaProgram generate_cuda(const std::vector<KernelSource>& kernels, const GpuTarget& gpu) {
  CudaProgram program;
  CNames names;
  std::ostringstream device;
  cuda_detail::reserve_c_words(names);
  // The entries keep the symbols asked for: they are claimed before any other name.
  for (const KernelSource& k : kernels)
    TESSEL_ICHECK(names.fresh(k.symbol) == k.symbol) << "'" << k.symbol << "' is not a unique C identifier";
  for (const KernelSource& k : kernels) {
    CudaFunction f;
    f.symbol = k.symbol;
    f.params = k.func->params();
    f.num_inputs = k.func->inputs.size();
    std::vector<Stmt> launches;
    split_top_level(k.func->body, f.scratch, launches);
    for (const Buffer& b : f.scratch) {
      f.scratch_bytes = align_up(f.scratch_bytes, kScratchAlignment);
      f.scratch_offsets.push_back(f.scratch_bytes);
      f.scratch_bytes += storage_bytes(*b);
    }
    std::vector<Buffer> visible = f.params;
    visible.insert(visible.end(), f.scratch.begin(), f.scratch.end());
    for (size_t i = 0; i < launches.size(); ++i) {
      CudaPrinter printer(names, program.asserts);
      CudaLaunch launch = describe_launch(names.fresh(f.symbol + "_l" + std::to_string(i)), launches[i], gpu,
                                          visible, printer);
      emit_kernel(launch, launches[i], names, printer, device);
      f.launches.push_back(std::move(launch));
    }
    program.functions.push_back(std::move(f));
  }
  std::ostringstream os;
  os << cuda_prelude() << "\n" << device.str();
  os << "#ifdef " << kCudaEmulationMacro << "\n";
  for (const CudaFunction& f : program.functions)
    for (const CudaLaunch& l : f.launches) emit_thread_entry(l, os);
  // The table the emulated device finds the kernels in (a null entry ends an empty one).
  os << "extern \"C\" const tessel_emu_kernel tessel_emu_kernels[] = {\n";
  size_t count = 0;
  for (const CudaFunction& f : program.functions)
    for (const CudaLaunch& l : f.launches) {
      os << "  {\"" << l.kernel << "\", " << l.kernel << "_thread},\n";
      ++count;
    }
  os << "  {nullptr, nullptr}};\nextern \"C\" const unsigned tessel_emu_kernel_count = " << count << ";\n";
  os << "#endif  // " << kCudaEmulationMacro << "\n";
  program.source = os.str();
  return program;
}

rt::GpuProgram gpu_program(const CudaProgram& program) {
  rt::GpuProgram out;
  for (const CudaFunction& f : program.functions) {
    rt::GpuFunction g;
    g.symbol = f.symbol;
    g.num_inputs = uint32_t(f.num_inputs);
    g.num_outputs = uint32_t(f.params.size() - f.num_inputs);
    for (const Buffer& b : f.params)
      g.param_bytes.push_back(uint64_t(b->storage_elements() * cuda_detail::c_storage_bytes(b->dtype)));
    g.scratch_bytes = uint64_t(f.scratch_bytes);
    for (const CudaLaunch& l : f.launches) {
      rt::GpuLaunch gl;
      gl.kernel = l.kernel;
      for (int d = 0; d < 3; ++d) {
        gl.grid[d] = uint32_t(l.grid[d]);
        gl.block[d] = uint32_t(l.block[d]);
      }
      gl.shared_bytes = uint64_t(l.shared_bytes);
      gl.has_barrier = l.has_barrier;
      for (const Buffer& b : l.buffers) gl.args.push_back(launch_arg(f, b));
      g.launches.push_back(std::move(gl));
    }
    out.functions.push_back(std::move(g));
  }
  for (const CudaAssert& a : program.asserts) out.asserts.push_back({a.format, a.values});
  return out;
}

}  // namespace tessel::codegen
