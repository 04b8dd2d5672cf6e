// Internal to the CPU backend: what an LlvmModule owns.
#pragma once

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

// Registers the native target with LLVM, once per process.
void initialize_llvm_targets();

// LLVM's target for the triple; a user error when LLVM has none.
const llvm::Target& llvm_target_for(const std::string& triple);

// A target machine for PIC code at -O3 codegen; a user error when LLVM does
// not know the triple or CPU.
std::unique_ptr<llvm::TargetMachine> make_target_machine(const CpuTarget& target);

}  // namespace tessel::codegen
