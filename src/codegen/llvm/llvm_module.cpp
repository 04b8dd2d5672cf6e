// LlvmModule: code generation of every kernel into one module, verification,
// the O3 pipeline with the target machine, the model data and object files.
#include "src/codegen/llvm/llvm_module.h"

#include <cstdlib>

#include <llvm/Analysis/CGSCCPassManager.h>
#include <llvm/Analysis/LoopAnalysisManager.h>
#include <llvm/IR/DiagnosticHandler.h>
#include <llvm/IR/DiagnosticInfo.h>
#include <llvm/IR/DiagnosticPrinter.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Verifier.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>

#include <mutex>

#include "ir/core/diagnostics.h"
#include "src/codegen/llvm/codegen_llvm.h"
#include "src/codegen/llvm/llvm_module_impl.h"

namespace tessel::codegen {

namespace {

void check_no_llvm_errors(const std::string& errors, const CpuTarget& target) {
  TESSEL_USER_CHECK(errors.empty(), Span{}) << "LLVM cannot generate code for cpu " << target.cpu << ": " << errors;
}

std::string joined_features(const CpuTarget& target) {
  std::string s;
  for (const std::string& f : target.features) s += (s.empty() ? "" : ",") + f;
  return s;
}

void run_o3(llvm::Module& m, llvm::TargetMachine& tm) {
  // For the developers: the module as emitted, before O3, to replay through
  // `opt-19 -O3 -pass-remarks-missed=loop-vectorize` when a loop the schedule
  // vectorized comes out scalar.
  if (const char* dump = std::getenv("TESSEL_DUMP_LLVM_BEFORE_O3")) {
    std::error_code ec;
    llvm::raw_fd_ostream os(dump, ec);
    m.print(os, nullptr);
  }
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PipelineTuningOptions tuning;
  tuning.LoopVectorization = true;
  tuning.SLPVectorization = true;
  llvm::PassBuilder pb(&tm, tuning);
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::ModulePassManager mpm = pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3);
  mpm.run(m, mam);
}

}  // namespace

bool KeepLlvmErrors::handleDiagnostics(const llvm::DiagnosticInfo& info) {
  if (info.getSeverity() != llvm::DS_Error) return true;
  std::string text;
  const auto* unsupported = llvm::dyn_cast<llvm::DiagnosticInfoUnsupported>(&info);
  if (unsupported && !with_location) {
    text = unsupported->getMessage().str();
  } else {
    llvm::raw_string_ostream os(text);
    llvm::DiagnosticPrinterRawOStream printer(os);
    info.print(printer);
  }
  if (errors->find(text) == std::string::npos) *errors += (errors->empty() ? "" : "; ") + text;
  return true;
}

void initialize_llvm_targets() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    llvm::InitializeNativeTargetAsmParser();
  });
}

const llvm::Target& llvm_target_for(const std::string& triple) {
  initialize_llvm_targets();
  std::string error;
  const llvm::Target* t = llvm::TargetRegistry::lookupTarget(triple, error);
  TESSEL_USER_CHECK(t, Span{}) << "LLVM has no target for " << triple << ": " << error;
  return *t;
}

std::unique_ptr<llvm::TargetMachine> make_target_machine(const CpuTarget& target) {
  llvm::TargetOptions options;
  std::unique_ptr<llvm::TargetMachine> tm(
      llvm_target_for(target.triple).createTargetMachine(target.triple, target.cpu, joined_features(target), options, llvm::Reloc::PIC_,
                             std::nullopt, llvm::CodeGenOptLevel::Aggressive));
  TESSEL_USER_CHECK(tm, Span{}) << "LLVM cannot make a target machine for " << target.triple << " cpu "
                                << target.cpu;
  return tm;
}

LlvmModule::LlvmModule(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
LlvmModule LlvmModule::adopt(std::unique_ptr<Impl> impl) {
  return LlvmModule(std::move(impl));
}
LlvmModule::LlvmModule(LlvmModule&&) noexcept = default;
LlvmModule& LlvmModule::operator=(LlvmModule&&) noexcept = default;
LlvmModule::~LlvmModule() = default;

LlvmModule LlvmModule::build(const std::vector<KernelSource>& kernels, const CodegenOptions& options) {
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  impl->context = std::make_unique<llvm::LLVMContext>();
  impl->context->setDiagnosticHandler(std::make_unique<KeepLlvmErrors>(&impl->llvm_errors, true));
  impl->module = std::make_unique<llvm::Module>("tessel", *impl->context);
  impl->machine = make_target_machine(options.target);
  impl->module->setTargetTriple(options.target.triple);
  impl->module->setDataLayout(impl->machine->createDataLayout());
  int vector_bits = vector_register_bits(options.target);
  for (const KernelSource& k : kernels) {
    CodegenLLVM cg(*impl->module, impl->options, vector_bits);
    cg.emit_kernel(k.symbol, k.func);
  }
  std::string problems;
  llvm::raw_string_ostream os(problems);
  TESSEL_ICHECK(!llvm::verifyModule(*impl->module, &os)) << "generated LLVM IR is invalid: " << os.str();
  run_o3(*impl->module, *impl->machine);
  check_no_llvm_errors(impl->llvm_errors, impl->options.target);
  return LlvmModule(std::move(impl));
}

const CodegenOptions& LlvmModule::options() const {
  return impl_->options;
}

void LlvmModule::add_model_data(std::span<const uint8_t> plan, std::span<const uint8_t> weights,
                                const std::vector<std::string>& kernel_order) {
  llvm::Module& m = *impl_->module;
  llvm::LLVMContext& ctx = *impl_->context;
  llvm::Type* i8 = llvm::Type::getInt8Ty(ctx);
  auto add_global = [&](const std::string& name, llvm::Constant* init, uint64_t align) {
    auto* g = new llvm::GlobalVariable(m, init->getType(), /*isConstant=*/true,
                                       llvm::GlobalValue::ExternalLinkage, init, name);
    g->setVisibility(llvm::GlobalValue::HiddenVisibility);
    g->setAlignment(llvm::Align(align));
  };
  auto bytes = [&](std::span<const uint8_t> data) {
    // A zero-length array is legal but some linkers drop it: keep one byte.
    static const uint8_t kZero = 0;
    if (data.empty()) data = std::span<const uint8_t>(&kZero, 1);
    return llvm::ConstantDataArray::getRaw(
        llvm::StringRef(reinterpret_cast<const char*>(data.data()), data.size()), data.size(), i8);
  };
  add_global("tessel_model_plan", bytes(plan), 8);
  add_global("tessel_model_plan_size", llvm::ConstantInt::get(llvm::Type::getInt64Ty(ctx), plan.size()), 8);
  add_global("tessel_model_weights", bytes(weights), 64);
  add_global("tessel_model_weights_size", llvm::ConstantInt::get(llvm::Type::getInt64Ty(ctx), weights.size()),
             8);
  std::vector<llvm::Constant*> table;
  for (const std::string& name : kernel_order) {
    llvm::Function* f = m.getFunction(name);
    TESSEL_ICHECK(f) << "no kernel " << name << " in the module";
    table.push_back(f);
  }
  auto* ptr = llvm::PointerType::get(ctx, 0);
  if (table.empty()) table.push_back(llvm::ConstantPointerNull::get(ptr));
  add_global("tessel_model_kernels", llvm::ConstantArray::get(llvm::ArrayType::get(ptr, table.size()), table),
             8);
  add_global("tessel_model_kernel_count",
             llvm::ConstantInt::get(llvm::Type::getInt32Ty(ctx), uint64_t(kernel_order.size())), 4);
}

std::string LlvmModule::ir_text() const {
  std::string text;
  llvm::raw_string_ostream os(text);
  impl_->module->print(os, nullptr);
  return os.str();
}

void LlvmModule::write_object(const std::string& path) const {
  std::error_code ec;
  llvm::raw_fd_ostream out(path, ec, llvm::sys::fs::OF_None);
  TESSEL_USER_CHECK(!ec, Span{}) << "cannot write " << path << ": " << ec.message();
  llvm::legacy::PassManager pm;
  TESSEL_ICHECK(!impl_->machine->addPassesToEmitFile(pm, out, nullptr, llvm::CodeGenFileType::ObjectFile))
      << "the target machine cannot emit object files";
  pm.run(*impl_->module);
  check_no_llvm_errors(impl_->llvm_errors, impl_->options.target);
  out.flush();
  TESSEL_USER_CHECK(!out.has_error(), Span{}) << "cannot write " << path << ": " << out.error().message();
}

}  // namespace tessel::codegen
