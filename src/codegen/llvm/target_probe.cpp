// The probe runs in a crash-recovery context with a fatal-error handler that
// returns here instead of ending the process, and a diagnostic handler that
// keeps LLVM's errors instead of exiting on them.
#include "src/codegen/llvm/target_probe.h"

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/Support/CrashRecoveryContext.h>
#include <llvm/Support/ErrorHandling.h>
#include <llvm/Support/Process.h>
#include <llvm/Support/raw_ostream.h>

#include <unistd.h>

// What a probe that LLVM left through the fatal-error handler allocated is
// kept on purpose (see ProbeState); the leak checker is told so.
#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
#define TESSEL_PROBE_LEAKS_ON_PURPOSE __lsan::ScopedDisabler probe_allocations_are_kept
#else
#define TESSEL_PROBE_LEAKS_ON_PURPOSE (void)0
#endif

#include <memory>
#include <mutex>
#include <vector>

#include "src/codegen/llvm/host_target.h"
#include "src/codegen/llvm/llvm_module_impl.h"

namespace tessel::codegen {

namespace {

thread_local std::string* probe_failure = nullptr;  // set while this thread probes

// Inside a probe: keep the reason and leave through the recovery context.
// Elsewhere: what LLVM does without a handler.
void on_fatal_error(void*, const char* reason, bool crash_diagnostics) {
  if (probe_failure && llvm::CrashRecoveryContext::GetCurrent()) {
    *probe_failure = reason;
    llvm::sys::Process::Exit(1);
  }
  std::string line = std::string("LLVM ERROR: ") + reason + "\n";
  ssize_t written = ::write(2, line.data(), line.size());
  (void)written;
  if (crash_diagnostics) abort();
  exit(1);
}

// float probe(ptr p, float x, i64 n): p[n..] = p[n..] + p[n..] as one vector;
// return expf(x) + (float)n.
void build_probe(llvm::Module& m, int vector_bits) {
  llvm::LLVMContext& ctx = m.getContext();
  llvm::Type* f32 = llvm::Type::getFloatTy(ctx);
  llvm::Type* i64 = llvm::Type::getInt64Ty(ctx);
  llvm::Type* ptr = llvm::PointerType::get(ctx, 0);
  auto* type = llvm::FunctionType::get(f32, {ptr, f32, i64}, false);
  auto* f = llvm::Function::Create(type, llvm::GlobalValue::ExternalLinkage, "tessel_probe", m);
  llvm::FunctionCallee expf = m.getOrInsertFunction("expf", llvm::FunctionType::get(f32, {f32}, false));
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", f));
  auto* vec = llvm::FixedVectorType::get(f32, unsigned(std::max(1, vector_bits / 32)));
  llvm::Value* at = b.CreateGEP(f32, f->getArg(0), b.CreateMul(f->getArg(2), b.getInt64(4)));
  llvm::Value* v = b.CreateAlignedLoad(vec, at, llvm::Align(4));
  b.CreateAlignedStore(b.CreateFAdd(v, v), at, llvm::Align(4));
  llvm::Value* e = b.CreateCall(expf, {f->getArg(1)});
  b.CreateRet(b.CreateFAdd(e, b.CreateSIToFP(f->getArg(2), f32)));
}

// Everything a probe allocates, owned here rather than by its stack frames,
// so that after a jump out of LLVM it is still reachable (kept, not freed:
// LLVM's objects are in no state to be destroyed then).
struct ProbeState {
  std::string errors;
  std::unique_ptr<llvm::LLVMContext> context;
  std::unique_ptr<llvm::Module> module;
  std::unique_ptr<llvm::TargetMachine> machine;
  llvm::SmallVector<char, 0> object;
  std::unique_ptr<llvm::raw_svector_ostream> out;
  std::unique_ptr<llvm::legacy::PassManager> passes;
};

void emit_probe(const CpuTarget& target, ProbeState& p) {
  p.context = std::make_unique<llvm::LLVMContext>();
  // Without location: where an error stands is in the probe, not the user's model.
  p.context->setDiagnosticHandler(std::make_unique<KeepLlvmErrors>(&p.errors, false));
  p.module = std::make_unique<llvm::Module>("tessel_probe", *p.context);
  p.machine = make_target_machine(target);
  p.module->setTargetTriple(target.triple);
  p.module->setDataLayout(p.machine->createDataLayout());
  build_probe(*p.module, vector_register_bits(target));
  p.out = std::make_unique<llvm::raw_svector_ostream>(p.object);
  p.passes = std::make_unique<llvm::legacy::PassManager>();
  if (p.machine->addPassesToEmitFile(*p.passes, *p.out, nullptr, llvm::CodeGenFileType::ObjectFile)) {
    p.errors = "the target machine cannot emit object files";
    return;
  }
  p.passes->run(*p.module);
}

}  // namespace

std::optional<std::string> llvm_cannot_generate(const CpuTarget& target) {
  initialize_llvm_targets();
  // Enabling recovery installs process-wide signal handlers: one probe at a time.
  static std::mutex probing;
  std::lock_guard<std::mutex> lock(probing);
  static std::once_flag handler_once;
  std::call_once(handler_once, [] { llvm::install_fatal_error_handler(on_fatal_error, nullptr); });
  static std::vector<std::unique_ptr<ProbeState>> failed_probes;
  // Objects LLVM made on the stack frames a jump skips are unreachable afterwards.
  TESSEL_PROBE_LEAKS_ON_PURPOSE;
  auto state = std::make_unique<ProbeState>();
  std::string fatal;
  probe_failure = &fatal;
  llvm::CrashRecoveryContext::Enable();
  bool finished;
  {
    llvm::CrashRecoveryContext recovery;
    finished = recovery.RunSafely([&] { emit_probe(target, *state); });
  }
  llvm::CrashRecoveryContext::Disable();
  probe_failure = nullptr;
  if (finished) return state->errors.empty() ? std::nullopt : std::optional<std::string>(state->errors);
  failed_probes.push_back(std::move(state));
  return fatal.empty() ? std::string("LLVM crashed generating code for it") : fatal;
}

}  // namespace tessel::codegen
