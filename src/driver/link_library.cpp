// link_model_library: the C compiler run by run_capturing (ir/core/subprocess.h), its
// output kept for the error message.
#include "src/driver/link_library.h"

#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "ir/core/diagnostics.h"
#include "ir/core/subprocess.h"

namespace tessel::driver {

namespace {

#if !defined(TESSEL_MODEL_RUNTIME_ARCHIVE) || !defined(TESSEL_MODEL_RUNTIME_GPU_ARCHIVE)
#error \
    "TESSEL_MODEL_RUNTIME_ARCHIVE and TESSEL_MODEL_RUNTIME_GPU_ARCHIVE are set by src/driver/CMakeLists.txt"
#endif

// The functions of include/tessel/runtime.h: all a model library exports.
constexpr const char* kAbiSymbols[] = {"tessel_abi_version",
                                       "tessel_version",
                                       "tessel_last_error",
                                       "tessel_last_status",
                                       "tessel_model_load",
                                       "tessel_model_unload",
                                       "tessel_model_num_inputs",
                                       "tessel_model_num_outputs",
                                       "tessel_model_input_info",
                                       "tessel_model_output_info",
                                       "tessel_model_num_kernels",
                                       "tessel_model_kernel_info",
                                       "tessel_model_arena_bytes",
                                       "tessel_model_device",
                                       "tessel_context_create",
                                       "tessel_context_destroy",
                                       "tessel_context_run",
                                       "tessel_context_run_profiled",
                                       "tessel_context_run_traced",
                                       "tessel_context_run_device",
                                       "tessel_set_num_threads",
                                       "tessel_get_num_threads",
                                       "tessel_model_output_dynamic_axis",
                                       "tessel_context_output_shape"};

std::string env_or(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::string(v) : fallback;
}

// A temporary file that is removed with this object.
class TempFile {
 public:
  TempFile(const std::string& stem, const std::string& text) {
    static std::atomic<int> counter{0};
    path_ = std::filesystem::temp_directory_path() /
            (stem + "_" + std::to_string(getpid()) + "_" + std::to_string(counter++) + ".map");
    std::ofstream(path_) << text;
    TESSEL_USER_CHECK(std::filesystem::exists(path_), Span{}) << "cannot write " << path_.string();
  }
  ~TempFile() {
    std::error_code ec;
    std::filesystem::remove(path_, ec);
  }
  std::string str() const { return path_.string(); }

 private:
  std::filesystem::path path_;
};

std::string version_script() {
  std::string s = "{\n  global:\n";
  for (const char* name : kAbiSymbols) s += "    " + std::string(name) + ";\n";
  return s + "  local: *;\n};\n";
}

}  // namespace

void link_model_library(const std::vector<std::string>& object_files, const std::string& output_so,
                        ModelRuntime runtime) {
  TESSEL_USER_CHECK(!object_files.empty(), Span{}) << "linking " << output_so << ": no object files";
  const char* variable =
      runtime == ModelRuntime::kGpu ? "TESSEL_MODEL_RUNTIME_GPU_ARCHIVE" : "TESSEL_MODEL_RUNTIME_ARCHIVE";
  std::string archive = env_or(variable, runtime == ModelRuntime::kGpu ? TESSEL_MODEL_RUNTIME_GPU_ARCHIVE
                                                                       : TESSEL_MODEL_RUNTIME_ARCHIVE);
  TESSEL_USER_CHECK(std::filesystem::exists(archive), Span{})
      << "the model runtime archive " << archive << " does not exist (set " << variable << ")";
  std::vector<std::string> argv = split_words(env_or("CC", "cc"));
  TESSEL_USER_CHECK(!argv.empty(), Span{}) << "CC names no compiler";
  TempFile script("tessel_model", version_script());
  for (const char* a : {"-shared", "-o"}) argv.push_back(a);
  // A path that starts with '-' would be an option to the compiler ("-lfoo.so" a library to link).
  argv.push_back(output_so.starts_with("-") ? "./" + output_so : output_so);
  argv.insert(argv.end(), object_files.begin(), object_files.end());
  // --whole-archive: the ABI's functions are what the library is for, though no object refers to them.
  for (const std::string& a :
       {std::string("-Wl,--whole-archive"), archive, std::string("-Wl,--no-whole-archive"),
        "-Wl,--version-script=" + script.str(), std::string("-lstdc++"), std::string("-lm"),
        std::string("-lpthread"), std::string("-ldl")})
    argv.push_back(a);
  FinishedProcess done = run_capturing(argv);
  TESSEL_USER_CHECK(done.spawn_error.empty(), Span{})
      << "cannot run the C compiler '" << argv[0] << "' to link the model library (" << done.spawn_error
      << "); set CC to a C compiler";
  if (done.exit_status == 0) return;
  std::string command = command_line(argv);
  TESSEL_USER_ERROR(Span{}) << "linking " << output_so << " failed ("
                            << (done.exit_status < 0 ? std::string("killed by a signal")
                                                     : "exit status " + std::to_string(done.exit_status))
                            << "): " << command << "\n"
                            << done.output;
}

}  // namespace tessel::driver
