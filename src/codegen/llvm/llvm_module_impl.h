// Internal to the CPU backend: what an LlvmModule owns.
#pragma once

#include <llvm/IR/DiagnosticHandler.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Target/TargetMachine.h>

#include <memory>

#include "src/codegen/llvm/llvm_module.h"

namespace tessel::codegen {

struct LlvmModule::Impl {
  CodegenOptions options;
  std::unique_ptr<llvm::LLVMContext> context;
  std::unique_ptr<llvm::Module> module;
  std::unique_ptr<llvm::TargetMachine> machine;
  std::string llvm_errors;  // errors LLVM reported while generating code
};

// Keeps LLVM's error diagnostics in `errors` ("; "-separated, each once)
// instead of taking LLVM's default path, which exits the process; warnings
// and remarks (a loop the vectorizer declined) are dropped. with_location:
// the whole text ("in function k0: ..."); else an unsupported operation's
// message alone.
struct KeepLlvmErrors final : llvm::DiagnosticHandler {
  KeepLlvmErrors(std::string* errors, bool with_location) : errors(errors), with_location(with_location) {}
  bool handleDiagnostics(const llvm::DiagnosticInfo& info) override;
  std::string* errors;
  bool with_location;
};

// Registers the native target with LLVM, once per process.
void initialize_llvm_targets();

// LLVM's target for the triple; a user error when LLVM has none.
const llvm::Target& llvm_target_for(const std::string& triple);

// A target machine for PIC code at -O3 codegen; a user error when LLVM does
// not know the triple or CPU.
std::unique_ptr<llvm::TargetMachine> make_target_machine(const CpuTarget& target);

}  // namespace tessel::codegen
