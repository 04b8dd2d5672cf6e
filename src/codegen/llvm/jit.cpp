// JitModule: the optimised module compiled by ORC's LLJIT in this process,
// for in-process runs (conformance, `tessel run model.onnx`, the tuner).
#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/Support/Error.h>

#include "ir/core/diagnostics.h"
#include "src/codegen/llvm/llvm_module.h"
#include "src/codegen/llvm/llvm_module_impl.h"

namespace tessel::codegen {

struct JitModule::Impl {
  std::unique_ptr<llvm::orc::LLJIT> jit;
};

namespace {

template <typename T>
T unwrap(llvm::Expected<T> value, const char* what) {
  if (!value) {
    TESSEL_ICHECK(false) << what << ": " << llvm::toString(value.takeError());
  }
  return std::move(*value);
}

void check(llvm::Error error, const char* what) {
  if (error) {
    TESSEL_ICHECK(false) << what << ": " << llvm::toString(std::move(error));
  }
}

}  // namespace

JitModule::JitModule(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
JitModule::~JitModule() = default;

std::unique_ptr<JitModule> JitModule::create(LlvmModule module,
                                             const std::vector<RuntimeSymbol>& runtime_symbols) {
  LlvmModule::Impl& m = *module.impl_;
  const CpuTarget& target = m.options.target;
  llvm::orc::JITTargetMachineBuilder jtmb{llvm::Triple(target.triple)};
  jtmb.setCPU(target.cpu);
  jtmb.addFeatures(target.features);
  jtmb.setCodeGenOptLevel(llvm::CodeGenOptLevel::Aggressive);
  jtmb.setRelocationModel(llvm::Reloc::PIC_);
  auto impl = std::make_unique<Impl>();
  impl->jit = unwrap(llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(std::move(jtmb)).create(),
                     "cannot start the LLVM JIT");
  llvm::orc::JITDylib& dylib = impl->jit->getMainJITDylib();
  char prefix = impl->jit->getDataLayout().getGlobalPrefix();
  dylib.addGenerator(unwrap(llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(prefix),
                            "cannot search the process's symbols"));
  llvm::orc::SymbolMap symbols;
  for (const RuntimeSymbol& s : runtime_symbols)
    symbols[impl->jit->mangleAndIntern(s.name)] =
        llvm::orc::ExecutorSymbolDef(llvm::orc::ExecutorAddr::fromPtr(s.address),
                                     llvm::JITSymbolFlags::Exported | llvm::JITSymbolFlags::Callable);
  check(dylib.define(llvm::orc::absoluteSymbols(std::move(symbols))), "cannot define the runtime symbols");
  m.module->setDataLayout(impl->jit->getDataLayout());
  check(impl->jit->addIRModule(llvm::orc::ThreadSafeModule(std::move(m.module), std::move(m.context))),
        "cannot add the module to the JIT");
  // Compile everything now, so that a failure shows here and runs are not timed with compilation.
  check(impl->jit->initialize(dylib), "cannot initialise the JIT-compiled code");
  return std::unique_ptr<JitModule>(new JitModule(std::move(impl)));
}

KernelFn JitModule::lookup(const std::string& symbol) const {
  llvm::orc::ExecutorAddr addr = unwrap(impl_->jit->lookup(symbol), "JIT symbol lookup");
  return addr.toPtr<KernelFn>();
}

}  // namespace tessel::codegen
