// Finding and opening NVRTC with dlopen; the symbol table of nvrtc_library.h.
#include "src/codegen/cuda/nvrtc_library.h"

#include <cstdlib>
#include <dlfcn.h>
#include <mutex>

namespace tessel::codegen {

namespace {

const char* const kSonames[] = {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"};

template <typename Fn>
bool bind(void* handle, const char* symbol, Fn& slot, std::string& missing) {
  slot = reinterpret_cast<Fn>(dlsym(handle, symbol));
  if (!slot) missing += (missing.empty() ? "" : ", ") + std::string(symbol);
  return slot != nullptr;
}

// Fills the table from an open library; the names of absent symbols in *missing.
bool bind_all(void* h, Nvrtc& n, std::string& missing) {
  bool ok = bind(h, "nvrtcVersion", n.version, missing);
  ok &= bind(h, "nvrtcGetNumSupportedArchs", n.get_num_supported_archs, missing);
  ok &= bind(h, "nvrtcGetSupportedArchs", n.get_supported_archs, missing);
  ok &= bind(h, "nvrtcGetErrorString", n.get_error_string, missing);
  ok &= bind(h, "nvrtcCreateProgram", n.create_program, missing);
  ok &= bind(h, "nvrtcDestroyProgram", n.destroy_program, missing);
  ok &= bind(h, "nvrtcCompileProgram", n.compile_program, missing);
  ok &= bind(h, "nvrtcGetProgramLogSize", n.get_program_log_size, missing);
  ok &= bind(h, "nvrtcGetProgramLog", n.get_program_log, missing);
  ok &= bind(h, "nvrtcGetPTXSize", n.get_ptx_size, missing);
  ok &= bind(h, "nvrtcGetPTX", n.get_ptx, missing);
  ok &= bind(h, "nvrtcGetCUBINSize", n.get_cubin_size, missing);
  ok &= bind(h, "nvrtcGetCUBIN", n.get_cubin, missing);
  return ok;
}

struct Loaded {
  Nvrtc nvrtc;
  bool ok = false;
  std::string why;
};

Loaded open_first() {
  Loaded result;
  std::string tried;
  for (const std::string& place : nvrtc_search_list()) {
    void* handle = dlopen(place.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      const char* err = dlerror();
      // The bare sonames fail on most machines; only name the files that exist but failed.
      if (place.find('/') != std::string::npos || std::getenv("TESSEL_NVRTC_LIBRARY"))
        tried += "\n  " + place + ": " + (err ? err : "cannot be opened");
      continue;
    }
    std::string missing;
    if (!bind_all(handle, result.nvrtc, missing)) {
      tried += "\n  " + place + ": lacks " + missing;
      dlclose(handle);
      continue;
    }
    Dl_info info{};  // the file the dynamic linker chose, not just the name asked for
    bool named = dladdr(reinterpret_cast<void*>(result.nvrtc.version), &info) != 0 && info.dli_fname;
    result.nvrtc.path = named ? info.dli_fname : place;
    result.ok = true;
    return result;
  }
  result.why = "NVRTC (libnvrtc.so) was not found; install the CUDA toolkit (12 or 13) or set "
               "TESSEL_NVRTC_LIBRARY to the library's path" +
               tried;
  return result;
}

}  // namespace

std::vector<std::string> nvrtc_search_list() {
  if (const char* exact = std::getenv("TESSEL_NVRTC_LIBRARY"); exact && *exact) return {exact};
  std::vector<std::string> list(std::begin(kSonames), std::end(kSonames));
  std::vector<std::string> folders;
  if (const char* home = std::getenv("CUDA_HOME"); home && *home) folders.push_back(std::string(home) + "/lib64");
  folders.push_back("/usr/local/cuda/lib64");
  folders.push_back("/usr/local/cuda/targets/x86_64-linux/lib");
  for (const std::string& folder : folders)
    for (const char* soname : kSonames) list.push_back(folder + "/" + soname);
  return list;
}

const Nvrtc* load_nvrtc(std::string* why) {
  static std::once_flag once;
  static Loaded loaded;
  std::call_once(once, [] { loaded = open_first(); });
  if (!loaded.ok && why) *why = loaded.why;
  return loaded.ok ? &loaded.nvrtc : nullptr;
}

std::string nvrtc_description() {
  std::string why;
  const Nvrtc* nvrtc = load_nvrtc(&why);
  if (!nvrtc) return "unavailable: " + why;
  int major = 0, minor = 0;
  if (nvrtc->version(&major, &minor) != 0) return "unavailable: nvrtcVersion failed in " + nvrtc->path;
  return std::to_string(major) + "." + std::to_string(minor) + " (" + nvrtc->path + ")";
}

std::vector<int> nvrtc_architectures() {
  const Nvrtc* nvrtc = load_nvrtc();
  int n = 0;
  if (!nvrtc || nvrtc->get_num_supported_archs(&n) != 0 || n <= 0) return {};
  std::vector<int> archs(static_cast<size_t>(n));
  if (nvrtc->get_supported_archs(archs.data()) != 0) return {};
  return archs;
}

std::string cuda_target_unavailable_reason() {
  std::string why;
  if (!load_nvrtc(&why)) return why;
  return {};
}

}  // namespace tessel::codegen
