#include "src/codegen/llvm/peak_kernel.h"

#include <chrono>

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/Verifier.h>

#include "ir/core/diagnostics.h"
#include "src/codegen/llvm/codegen_llvm.h"
#include "src/codegen/llvm/llvm_module_impl.h"

namespace tessel::codegen {

namespace {

void emit_peak_function(llvm::Module& m, const CpuTarget& target, int lanes, int accumulators) {
  llvm::LLVMContext& ctx = m.getContext();
  llvm::Type* i64 = llvm::Type::getInt64Ty(ctx);
  llvm::Type* f32 = llvm::Type::getFloatTy(ctx);
  llvm::Type* ptr = llvm::PointerType::get(ctx, 0);
  auto* vec = llvm::FixedVectorType::get(f32, unsigned(lanes));
  auto* f = llvm::Function::Create(llvm::FunctionType::get(llvm::Type::getInt32Ty(ctx), {ptr}, false),
                                   llvm::GlobalValue::ExternalLinkage, "tessel_fma_peak", m);
  // The kernels' own attributes: without them LLVM splits 512-bit vectors on CPUs it tunes for 256.
  set_target_attributes(*f, target);
  llvm::BasicBlock* entry = llvm::BasicBlock::Create(ctx, "entry", f);
  llvm::BasicBlock* loop = llvm::BasicBlock::Create(ctx, "loop", f);
  llvm::BasicBlock* exit = llvm::BasicBlock::Create(ctx, "exit", f);
  llvm::IRBuilder<> b(entry);
  llvm::Value* rounds = b.CreateLoad(i64, b.CreateLoad(ptr, f->getArg(0)));
  llvm::Value* sink = b.CreateLoad(ptr, b.CreateConstGEP1_64(ptr, f->getArg(0), 1));
  // a slightly below 1 and a small b keep the values normal for any count.
  llvm::Value* a = llvm::ConstantFP::get(vec, 0.9999999);
  llvm::Value* c = llvm::ConstantFP::get(vec, 1e-7);
  b.CreateBr(loop);
  b.SetInsertPoint(loop);
  llvm::PHINode* i = b.CreatePHI(i64, 2);
  i->addIncoming(b.getInt64(0), entry);
  std::vector<llvm::PHINode*> acc;
  llvm::Function* fma = llvm::Intrinsic::getDeclaration(&m, llvm::Intrinsic::fma, {vec});
  std::vector<llvm::Value*> next;
  for (int j = 0; j < accumulators; ++j) {
    acc.push_back(b.CreatePHI(vec, 2));
    acc.back()->addIncoming(llvm::ConstantFP::get(vec, 1.0 + j), entry);
  }
  for (int j = 0; j < accumulators; ++j) next.push_back(b.CreateCall(fma, {acc[size_t(j)], a, c}));
  for (int j = 0; j < accumulators; ++j) acc[size_t(j)]->addIncoming(next[size_t(j)], loop);
  llvm::Value* i_next = b.CreateAdd(i, b.getInt64(1));
  i->addIncoming(i_next, loop);
  b.CreateCondBr(b.CreateICmpULT(i_next, rounds), loop, exit);
  b.SetInsertPoint(exit);
  // The sum reads the last round's values, not the phis: a phi live past its
  // update costs a register copy per accumulator per round.
  llvm::Value* sum = next[0];
  for (int j = 1; j < accumulators; ++j) sum = b.CreateFAdd(sum, next[size_t(j)]);
  b.CreateStore(b.CreateExtractElement(sum, uint64_t(0)), sink);
  b.CreateRet(b.getInt32(0));
}

}  // namespace

PeakKernel compile_peak_kernel(const CpuTarget& target, int accumulators) {
  int bits = vector_register_bits(target);
  int lanes = bits / 32;
  if (accumulators <= 0) accumulators = bits == 512 ? 16 : 12;  // 32 or 16 vector registers
  auto impl = std::make_unique<LlvmModule::Impl>();
  impl->options.target = target;
  impl->context = std::make_unique<llvm::LLVMContext>();
  impl->module = std::make_unique<llvm::Module>("tessel_peak", *impl->context);
  impl->machine = make_target_machine(target);
  impl->module->setTargetTriple(target.triple);
  impl->module->setDataLayout(impl->machine->createDataLayout());
  emit_peak_function(*impl->module, target, lanes, accumulators);
  std::string problems;
  llvm::raw_string_ostream os(problems);
  TESSEL_ICHECK(!llvm::verifyModule(*impl->module, &os)) << "the peak kernel is invalid: " << os.str();
  PeakKernel k;
  k.code = JitModule::create(LlvmModule::adopt(std::move(impl)), {});
  k.fn = k.code->lookup("tessel_fma_peak");
  k.accumulators = accumulators;
  k.flops_per_round = 2.0 * lanes * accumulators;
  return k;
}

namespace {

// Seconds per FMA instruction of the kernel: the best of a few runs.
double seconds_per_fma(const PeakKernel& k, int64_t rounds) {
  double best = 0;
  float sink = 0;
  for (int r = 0; r < 5; ++r) {
    int64_t n = rounds;
    void* args[] = {&n, &sink};
    auto start = std::chrono::steady_clock::now();
    k.fn(args);
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (r == 0 || s < best) best = s;
  }
  return best / double(rounds * k.accumulators);
}

}  // namespace

int measure_fmas_in_flight(const CpuTarget& target) {
  PeakKernel chain = compile_peak_kernel(target, 1), wide = compile_peak_kernel(target, 0);
  constexpr int64_t kRounds = 100000;
  double ratio = seconds_per_fma(chain, kRounds) / seconds_per_fma(wide, kRounds);
  // A power of two: the figure names a kind of core, stable between runs on
  // a busy machine (it is part of the tuning log's target).
  int in_flight = 1;
  while (in_flight < 32 && double(in_flight) * 1.41421356 < ratio) in_flight *= 2;
  return in_flight;
}

}  // namespace tessel::codegen
