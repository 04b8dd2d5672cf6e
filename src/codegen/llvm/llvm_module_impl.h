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
};

// Registers the native target with LLVM, once per process.
void initialize_llvm_targets();

// A target machine for PIC code at -O3 codegen; a user error when LLVM does
// not know the triple or CPU.
std::unique_ptr<llvm::TargetMachine> make_target_machine(const CpuTarget& target);

}  // namespace tessel::codegen
