// write_cuda_model_object: the data written to files of a private folder, a
// C++ file with the emulated kernels (if any) and a top-level asm block that
// places the files' bytes under the symbols kernel_abi.h and
// model_engine_gpu.cpp name, compiled with -c.
#include "src/codegen/cuda/cuda_model_object.h"

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "ir/core/diagnostics.h"
#include "src/codegen/cuda/cuda_emulator.h"

namespace tessel::codegen {

namespace {

void write_bytes(const std::filesystem::path& file, const void* data, size_t size) {
  std::ofstream out(file, std::ios::binary);
  out.write(static_cast<const char*>(data), std::streamsize(size));
  TESSEL_USER_CHECK(out.good(), Span{}) << "cannot write " << file.string();
}

// A symbol holding a file's bytes, then one holding their count.
std::string data_symbol(const std::string& name, const std::filesystem::path& file, size_t size, int align) {
  return "  .balign " + std::to_string(align) + "\n  .globl " + name + "\n  .type " + name + ", @object\n" +
         name + ":\n  .incbin \"" + file.string() + "\"\n  .byte 0\n  .balign 8\n  .globl " + name +
         "_size\n  .type " + name + "_size, @object\n" + name + "_size:\n  .quad " + std::to_string(size) +
         "\n";
}

}  // namespace

rt::GpuProgram in_kernel_order(rt::GpuProgram program, const std::vector<std::string>& kernel_order) {
  std::vector<rt::GpuFunction> ordered;
  for (const std::string& symbol : kernel_order) {
    auto it = std::find_if(program.functions.begin(), program.functions.end(),
                           [&](const rt::GpuFunction& f) { return f.symbol == symbol; });
    TESSEL_ICHECK(it != program.functions.end()) << "the GPU program has no function " << symbol;
    ordered.push_back(*it);
  }
  program.functions = std::move(ordered);
  return program;
}

void write_cuda_model_object(const rt::GpuProgram& program, const std::string& emulated_source,
                             const ModelData& data, const std::string& path) {
  std::filesystem::path dir = private_folder();
  struct Remove {
    std::filesystem::path dir;
    ~Remove() {
      std::error_code ec;
      std::filesystem::remove_all(dir, ec);
    }
  } remove{dir};
  std::vector<uint8_t> gpu = rt::serialize_gpu_program(program);
  write_bytes(dir / "plan.bin", data.plan.data(), data.plan.size());
  write_bytes(dir / "weights.bin", data.weights.data(), data.weights.size());
  write_bytes(dir / "gpu.bin", gpu.data(), gpu.size());
  std::ofstream text(dir / "model.cpp");
  text << emulated_source << "\n// The model's data (kernel_abi.h, model_engine_gpu.cpp).\nasm(R\"TESSEL(\n"
       << "  .section .rodata.tessel_model,\"a\",@progbits\n"
       << data_symbol("tessel_model_plan", dir / "plan.bin", data.plan.size(), 8)
       << data_symbol("tessel_model_weights", dir / "weights.bin", data.weights.size(), 64)
       << data_symbol("tessel_model_gpu_program", dir / "gpu.bin", gpu.size(), 8) << "  .text\n)TESSEL\");\n";
  text.close();
  TESSEL_USER_CHECK(text.good(), Span{}) << "cannot write " << (dir / "model.cpp").string();
  run_host_compiler(host_compile_command((dir / "model.cpp").string(), path, false));
}

}  // namespace tessel::codegen
