// The CUDA driver API opened at run time: the functions this file uses,
// looked up by their versioned names, and DriverDevice on top of them. The
// types are the driver's ABI (cuda.h), declared here so that the build
// needs no toolkit.
#include "src/runtime/gpu/cuda_driver.h"

#include <dlfcn.h>

#include <cstdlib>
#include <vector>

#include "src/runtime/plan.h"
#include "tessel/runtime.h"

namespace tessel::rt {

namespace {

using CUresult = int;
using CUdevice = int;
using CUcontext = void*;
using CUmodule = void*;
using CUfunction = void*;
using CUevent = void*;
using CUstream = void*;
using CUdeviceptr = unsigned long long;

constexpr int kAttrComputeMajor = 75, kAttrComputeMinor = 76;
constexpr int kFuncMaxDynamicShared = 8;
constexpr CUresult kNoDevice = 100, kStubLibrary = 34;

// The driver's entry points this runtime calls.
struct Driver {
  void* library = nullptr;
  std::string path;
  CUresult (*cuInit)(unsigned);
  CUresult (*cuGetErrorName)(CUresult, const char**);
  CUresult (*cuGetErrorString)(CUresult, const char**);
  CUresult (*cuDeviceGetCount)(int*);
  CUresult (*cuDeviceGet)(CUdevice*, int);
  CUresult (*cuDeviceGetName)(char*, int, CUdevice);
  CUresult (*cuDeviceGetAttribute)(int*, int, CUdevice);
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext*, CUdevice);
  CUresult (*cuDevicePrimaryCtxRelease)(CUdevice);
  CUresult (*cuCtxSetCurrent)(CUcontext);
  CUresult (*cuCtxSynchronize)();
  CUresult (*cuModuleLoadData)(CUmodule*, const void*);
  CUresult (*cuModuleUnload)(CUmodule);
  CUresult (*cuModuleGetFunction)(CUfunction*, CUmodule, const char*);
  CUresult (*cuFuncSetAttribute)(CUfunction, int, int);
  CUresult (*cuMemAlloc)(CUdeviceptr*, size_t);
  CUresult (*cuMemFree)(CUdeviceptr);
  CUresult (*cuMemcpyHtoD)(CUdeviceptr, const void*, size_t);
  CUresult (*cuMemcpyDtoH)(void*, CUdeviceptr, size_t);
  CUresult (*cuMemcpyDtoD)(CUdeviceptr, CUdeviceptr, size_t);
  CUresult (*cuMemsetD8)(CUdeviceptr, unsigned char, size_t);
  CUresult (*cuMemsetD8Async)(CUdeviceptr, unsigned char, size_t, CUstream);
  CUresult (*cuMemcpyDtoDAsync)(CUdeviceptr, CUdeviceptr, size_t, CUstream);
  CUresult (*cuStreamSynchronize)(CUstream);
  CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                             CUstream, void**, void**);
  CUresult (*cuEventCreate)(CUevent*, unsigned);
  CUresult (*cuEventDestroy)(CUevent);
  CUresult (*cuEventRecord)(CUevent, CUstream);
  CUresult (*cuEventSynchronize)(CUevent);
  CUresult (*cuEventElapsedTime)(float*, CUevent, CUevent);

  std::string describe(CUresult r) const {
    const char *name = nullptr, *text = nullptr;
    if (r == kStubLibrary) return "CUDA_ERROR_STUB_LIBRARY: " + path + " is the toolkit's stub, not a driver";
    if (cuGetErrorName(r, &name) != 0 || !name) return "CUDA error " + std::to_string(r);
    if (cuGetErrorString(r, &text) != 0 || !text) return name;
    return std::string(name) + ": " + text;
  }
  void check(CUresult r, const char* what, int status = TESSEL_ERR_KERNEL_FAILED) const {
    if (r != 0) throw StatusError(status, std::string(what) + " failed: " + describe(r));
  }
};

template <typename Fn>
void bind(Fn& fn, void* library, const char* name, std::string& missing) {
  fn = reinterpret_cast<Fn>(dlsym(library, name));
  if (!fn) missing += std::string(missing.empty() ? "" : ", ") + name;
}

// The driver's library and functions, or a StatusError naming what is missing.
const Driver& driver() {
  static Driver d;
  static std::string failure;
  static bool tried = false;
  if (!tried) {
    tried = true;
    const char* env = std::getenv("TESSEL_LIBCUDA");
    d.path = env && *env ? env : "libcuda.so.1";
    d.library = dlopen(d.path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!d.library) {
      const char* error = dlerror();
      std::string why = error ? error : "not found";
      failure = "no CUDA driver (" + (why.starts_with(d.path) ? why : d.path + ": " + why) + ")";
    } else {
      std::string missing;
      bind(d.cuInit, d.library, "cuInit", missing);
      bind(d.cuGetErrorName, d.library, "cuGetErrorName", missing);
      bind(d.cuGetErrorString, d.library, "cuGetErrorString", missing);
      bind(d.cuDeviceGetCount, d.library, "cuDeviceGetCount", missing);
      bind(d.cuDeviceGet, d.library, "cuDeviceGet", missing);
      bind(d.cuDeviceGetName, d.library, "cuDeviceGetName", missing);
      bind(d.cuDeviceGetAttribute, d.library, "cuDeviceGetAttribute", missing);
      bind(d.cuDevicePrimaryCtxRetain, d.library, "cuDevicePrimaryCtxRetain", missing);
      bind(d.cuDevicePrimaryCtxRelease, d.library, "cuDevicePrimaryCtxRelease_v2", missing);
      bind(d.cuCtxSetCurrent, d.library, "cuCtxSetCurrent", missing);
      bind(d.cuCtxSynchronize, d.library, "cuCtxSynchronize", missing);
      bind(d.cuModuleLoadData, d.library, "cuModuleLoadData", missing);
      bind(d.cuModuleUnload, d.library, "cuModuleUnload", missing);
      bind(d.cuModuleGetFunction, d.library, "cuModuleGetFunction", missing);
      bind(d.cuFuncSetAttribute, d.library, "cuFuncSetAttribute", missing);
      bind(d.cuMemAlloc, d.library, "cuMemAlloc_v2", missing);
      bind(d.cuMemFree, d.library, "cuMemFree_v2", missing);
      bind(d.cuMemcpyHtoD, d.library, "cuMemcpyHtoD_v2", missing);
      bind(d.cuMemcpyDtoH, d.library, "cuMemcpyDtoH_v2", missing);
      bind(d.cuMemcpyDtoD, d.library, "cuMemcpyDtoD_v2", missing);
      bind(d.cuMemsetD8, d.library, "cuMemsetD8_v2", missing);
      bind(d.cuMemsetD8Async, d.library, "cuMemsetD8Async", missing);
      bind(d.cuMemcpyDtoDAsync, d.library, "cuMemcpyDtoDAsync_v2", missing);
      bind(d.cuStreamSynchronize, d.library, "cuStreamSynchronize", missing);
      bind(d.cuLaunchKernel, d.library, "cuLaunchKernel", missing);
      bind(d.cuEventCreate, d.library, "cuEventCreate", missing);
      bind(d.cuEventDestroy, d.library, "cuEventDestroy_v2", missing);
      bind(d.cuEventRecord, d.library, "cuEventRecord", missing);
      bind(d.cuEventSynchronize, d.library, "cuEventSynchronize", missing);
      bind(d.cuEventElapsedTime, d.library, "cuEventElapsedTime", missing);
      if (!missing.empty())
        failure = d.path + " is not a CUDA driver this Tessel can use: it lacks " + missing;
      else if (CUresult r = d.cuInit(0); r != 0)
        failure = "the CUDA driver did not start: " + d.describe(r);
    }
  }
  if (!failure.empty()) throw StatusError(TESSEL_ERR_UNSUPPORTED_DEVICE, failure);
  return d;
}

class DriverDevice final : public GpuDevice {
 public:
  explicit DriverDevice(const CudaImage& image) : d_(driver()) {
    int count = 0;
    d_.check(d_.cuDeviceGetCount(&count), "cuDeviceGetCount", TESSEL_ERR_UNSUPPORTED_DEVICE);
    if (count == 0) throw StatusError(TESSEL_ERR_UNSUPPORTED_DEVICE, "the CUDA driver sees no GPU");
    d_.check(d_.cuDeviceGet(&device_, 0), "cuDeviceGet");
    char name[256] = {};
    d_.check(d_.cuDeviceGetName(name, sizeof name - 1, device_), "cuDeviceGetName");
    int major = 0, minor = 0;
    d_.check(d_.cuDeviceGetAttribute(&major, kAttrComputeMajor, device_), "cuDeviceGetAttribute");
    d_.check(d_.cuDeviceGetAttribute(&minor, kAttrComputeMinor, device_), "cuDeviceGetAttribute");
    sm_ = major * 10 + minor;
    name_ = std::string(name) + " (sm_" + std::to_string(sm_) + ")";
    if (sm_ < image.sm)
      throw StatusError(TESSEL_ERR_UNSUPPORTED_DEVICE,
                        "the code is compiled for sm_" + std::to_string(image.sm) + " and this GPU, " +
                            name_ + ", is older; compile with --target \"cuda -arch=sm_" +
                            std::to_string(sm_) + "\"");
    d_.check(d_.cuDevicePrimaryCtxRetain(&context_, device_), "cuDevicePrimaryCtxRetain");
    d_.check(d_.cuCtxSetCurrent(context_), "cuCtxSetCurrent");
    const std::string& code = sm_ == image.sm ? image.cubin : image.ptx;
    d_.check(d_.cuModuleLoadData(&module_, code.c_str()),
             sm_ == image.sm ? "loading the CUBIN" : "loading the PTX (compiled by the driver for this GPU)",
             TESSEL_ERR_CORRUPT_MODEL);
  }
  ~DriverDevice() override {
    if (module_) d_.cuModuleUnload(module_);
    if (context_) d_.cuDevicePrimaryCtxRelease(device_);
  }

  std::string name() const override { return name_; }
  DevicePtr alloc(uint64_t bytes) override {
    current();
    CUdeviceptr p = 0;
    d_.check(d_.cuMemAlloc(&p, bytes), ("allocating " + std::to_string(bytes) + " bytes on the GPU").c_str(),
             TESSEL_ERR_OUT_OF_MEMORY);
    return p;
  }
  void release(DevicePtr p) override {
    current();
    d_.cuMemFree(p);
  }
  void upload(DevicePtr dst, const void* src, uint64_t bytes) override {
    current();
    d_.check(d_.cuMemcpyHtoD(dst, src, bytes), "cuMemcpyHtoD");
  }
  void download(void* dst, DevicePtr src, uint64_t bytes) override {
    current();
    d_.check(d_.cuMemcpyDtoH(dst, src, bytes), "cuMemcpyDtoH (after the launches before it)",
             TESSEL_ERR_KERNEL_FAILED);
  }
  void copy(DevicePtr dst, DevicePtr src, uint64_t bytes) override {
    current();
    d_.check(d_.cuMemcpyDtoD(dst, src, bytes), "cuMemcpyDtoD");
  }
  void zero(DevicePtr dst, uint64_t bytes) override {
    current();
    d_.check(d_.cuMemsetD8(dst, 0, bytes), "cuMemsetD8");
  }

  void* kernel(const std::string& name) override {
    CUfunction f = nullptr;
    d_.check(d_.cuModuleGetFunction(&f, module_, name.c_str()), ("finding kernel " + name).c_str(),
             TESSEL_ERR_CORRUPT_MODEL);
    return f;
  }
  void zero_on(void* stream, DevicePtr dst, uint64_t bytes) override {
    current();
    d_.check(d_.cuMemsetD8Async(dst, 0, bytes, stream), "cuMemsetD8Async");
  }
  void copy_on(void* stream, DevicePtr dst, DevicePtr src, uint64_t bytes) override {
    current();
    d_.check(d_.cuMemcpyDtoDAsync(dst, src, bytes, stream), "cuMemcpyDtoDAsync");
  }

  void launch(void* kernel, const GpuLaunch& l, void** params, void* stream) override {
    current();
    constexpr uint64_t kDefaultShared = 48 * 1024;  // more must be asked for, per kernel
    if (l.shared_bytes > kDefaultShared)
      d_.check(d_.cuFuncSetAttribute(kernel, kFuncMaxDynamicShared, int(l.shared_bytes)),
               ("allowing " + l.kernel + " its shared memory").c_str());
    d_.check(d_.cuLaunchKernel(kernel, l.grid[0], l.grid[1], l.grid[2], l.block[0], l.block[1], l.block[2],
                               unsigned(l.shared_bytes), stream, params, nullptr),
             ("launching " + l.kernel).c_str(), TESSEL_ERR_KERNEL_FAILED);
  }
  void synchronize() override {
    current();
    d_.check(d_.cuCtxSynchronize(), "waiting for the GPU", TESSEL_ERR_KERNEL_FAILED);
  }
  void synchronize_stream(void* stream) override {
    current();
    d_.check(d_.cuStreamSynchronize(stream), "waiting for the stream", TESSEL_ERR_KERNEL_FAILED);
  }

  void* create_event() override {
    current();
    CUevent e = nullptr;
    d_.check(d_.cuEventCreate(&e, 0), "cuEventCreate");
    return e;
  }
  void destroy_event(void* e) override { d_.cuEventDestroy(e); }
  void record_event(void* e) override {
    current();
    d_.check(d_.cuEventRecord(e, nullptr), "cuEventRecord");
  }
  double seconds_between(void* start, void* end) override {
    d_.check(d_.cuEventSynchronize(end), "waiting for an event", TESSEL_ERR_KERNEL_FAILED);
    float ms = 0;
    d_.check(d_.cuEventElapsedTime(&ms, start, end), "cuEventElapsedTime");
    return double(ms) * 1e-3;
  }

 private:
  // The driver's current context is per thread: each caller's thread makes it ours.
  void current() { d_.check(d_.cuCtxSetCurrent(context_), "cuCtxSetCurrent"); }

  const Driver& d_;
  CUdevice device_ = 0;
  CUcontext context_ = nullptr;
  CUmodule module_ = nullptr;
  int sm_ = 0;
  std::string name_;
};

}  // namespace

std::string cuda_driver_unavailable_reason() {
  try {
    const Driver& d = driver();
    int count = 0;
    if (CUresult r = d.cuDeviceGetCount(&count); r != 0)
      return "the CUDA driver sees no GPU: " + d.describe(r);
    return count == 0 ? "the CUDA driver sees no GPU" : "";
  } catch (const StatusError& e) {
    return e.what();
  }
}

std::unique_ptr<GpuDevice> open_cuda_device(const CudaImage& image) {
  return std::make_unique<DriverDevice>(image);
}

}  // namespace tessel::rt
