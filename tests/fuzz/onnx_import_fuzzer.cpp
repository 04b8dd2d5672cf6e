// libFuzzer target: arbitrary bytes through onnx_frontend::import_model_bytes.
// A UserError is the expected answer to a bad model; anything else (another
// exception, a sanitizer report, a crash, a hang) is a finding.
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "src/frontend/onnx/importer.h"
#include "tessel/error.h"

namespace {

namespace fs = std::filesystem;

// The model folder: one small external-data file ("weights.bin", 4 KiB of a
// byte ramp) so that external data is exercised too, inside a private folder.
std::string g_model_dir;

void make_model_dir() {
  fs::path dir = fs::temp_directory_path() / ("tessel_fuzz_" + std::to_string(getpid()));
  fs::create_directories(dir);
  std::ofstream out(dir / "weights.bin", std::ios::binary);
  for (int i = 0; i < 4096; ++i) out.put(char(i & 0xff));
  g_model_dir = dir.string();
}

void remove_model_dir() {
  std::error_code ec;
  fs::remove_all(g_model_dir, ec);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  make_model_dir();
  std::atexit(remove_model_dir);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string bytes(reinterpret_cast<const char*>(data), size);
  try {
    tessel::onnx_frontend::import_model_bytes(bytes, g_model_dir);
  } catch (const tessel::UserError&) {
    // A clear refusal is the right answer to a bad model.
  }
  return 0;
}
