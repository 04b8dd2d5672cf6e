#include "tests/unit/codegen_llvm_util.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "src/runtime/runtime_symbols.h"
#include "src/tir_passes/flatten_blocks.h"

namespace tessel::codegen_test {

using codegen::CpuTarget;

namespace {

// Runs chunks one after another, three per loop, so that the chunk bounds
// the generated code receives are exercised without a thread pool.
extern "C" void serial_parallel_for(int64_t n, void (*body)(int64_t, int64_t, void*), void* closure) {
  int64_t chunk = (n + 2) / 3;
  for (int64_t begin = 0; begin < n; begin += chunk) body(begin, std::min(n, begin + chunk), closure);
}

std::vector<codegen::RuntimeSymbol> test_runtime() {
  return codegen::runtime_symbols(rt::kernel_runtime_symbols(&serial_parallel_for));
}

}  // namespace

std::vector<Tensor> run_compiled(const tir::PrimFunc& func, const std::vector<Tensor>& inputs,
                                 std::string* ir, const CpuTarget& target) {
  tir::PrimFunc flat = tir_passes::flatten_blocks(func);
  codegen::CodegenOptions options;
  options.target = target;
  codegen::LlvmModule m = codegen::LlvmModule::build({{"kernel", flat}}, options);
  if (ir) *ir = m.ir_text();
  auto jit = codegen::JitModule::create(std::move(m), test_runtime());
  std::vector<Tensor> outputs;
  std::vector<void*> args;
  for (const Tensor& t : inputs) args.push_back(const_cast<void*>(t.raw()));
  for (const tir::Buffer& b : flat->outputs) outputs.emplace_back(b->dtype, b->shape);
  for (Tensor& t : outputs) args.push_back(t.raw());
  EXPECT_EQ(jit->lookup("kernel")(args.data()), 0);
  return outputs;
}

tir::PrimFunc unary_func(tir::Intrinsic op, DType t, int64_t n) {
  tir::Buffer x = tir::make_buffer("x", t, {n}), y = tir::make_buffer("y", t, {n});
  tir::Var i = tir::var("i");
  tir::Expr value = tir::call(op, {tir::load(x, {i})});
  if (value->dtype == DType::kBool) value = tir::cast(t, value);
  tir::Stmt body = tir::make_for(i, tir::int_imm(0), tir::int_imm(n), tir::ForKind::kVectorized,
                                 tir::make_store(y, value, {i}));
  return tir::make_prim_func("unary", {x}, {y}, body);
}

std::vector<CpuTarget> host_feature_sets() {
  CpuTarget host = codegen::host_cpu_target();
  std::vector<CpuTarget> targets = {host};
  if (codegen::vector_register_bits(host) == 512) {
    CpuTarget avx2 = host;
    std::erase_if(avx2.features, [](const std::string& f) { return f.starts_with("+avx512"); });
    avx2.features.push_back("-avx512f");
    avx2.vector_bits = 256;
    targets.push_back(avx2);
  }
  return targets;
}

}  // namespace tessel::codegen_test
