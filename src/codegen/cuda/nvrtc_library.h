// NVRTC, CUDA's run-time compiler, opened with dlopen when first asked for:
// Tessel builds and starts without the CUDA toolkit (the CUDA target is then
// reported unavailable), and finds NVRTC wherever a machine keeps it (the
// toolkit, or a PyTorch install's nvidia/cuda_nvrtc/lib). Needs no GPU.
//
//   std::string why;
//   if (const Nvrtc* nvrtc = load_nvrtc(&why)) { int ma, mi; nvrtc->version(&ma, &mi); }
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace tessel::codegen {

// The entry points Tessel uses, with NVRTC's C signatures (nvrtc.h); status 0
// is NVRTC_SUCCESS. The handle type is opaque.
struct Nvrtc {
  using Program = struct NvrtcProgramOpaque*;
  int (*version)(int* major, int* minor) = nullptr;
  int (*get_num_supported_archs)(int* count) = nullptr;
  int (*get_supported_archs)(int* archs) = nullptr;
  const char* (*get_error_string)(int status) = nullptr;
  int (*create_program)(Program* program, const char* source, const char* name, int num_headers,
                        const char* const* headers, const char* const* include_names) = nullptr;
  int (*destroy_program)(Program* program) = nullptr;
  int (*compile_program)(Program program, int num_options, const char* const* options) = nullptr;
  int (*get_program_log_size)(Program program, size_t* size) = nullptr;
  int (*get_program_log)(Program program, char* log) = nullptr;
  int (*get_ptx_size)(Program program, size_t* size) = nullptr;
  int (*get_ptx)(Program program, char* ptx) = nullptr;
  int (*get_cubin_size)(Program program, size_t* size) = nullptr;
  int (*get_cubin)(Program program, char* cubin) = nullptr;
  std::string path;  // the library file it was loaded from
};

// The places tried, in order: $TESSEL_NVRTC_LIBRARY alone when it is set (a
// file), else the dynamic linker's search path, then $CUDA_HOME/lib64,
// /usr/local/cuda/lib64 and /usr/local/cuda/targets/x86_64-linux/lib, each
// for libnvrtc.so.13, .so.12 and .so.
std::vector<std::string> nvrtc_search_list();

// NVRTC loaded on the first call (thread-safe; the same result afterwards).
// nullptr when it cannot be loaded, and then *why (if given) says which places
// were tried and what dlopen answered.
const Nvrtc* load_nvrtc(std::string* why = nullptr);

// "13.0 (/usr/local/cuda/lib64/libnvrtc.so.13)", or "unavailable: <why>".
std::string nvrtc_description();

// The GPU architectures NVRTC compiles for (75, 80, 86, 89, 90, ...); empty
// without NVRTC.
std::vector<int> nvrtc_architectures();

// Why `--target cuda` cannot be served on this machine and build, in words
// for a user; empty when it can.
std::string cuda_target_unavailable_reason();

}  // namespace tessel::codegen
