// load_model_library: a model.so opened with dlopen and driven through its C
// ABI (include/tessel/runtime.h), exactly as a user's program would.
#include <dlfcn.h>

#include <filesystem>

#include "ir/core/diagnostics.h"
#include "src/driver/compiled_model.h"
#include "tessel/runtime.h"

namespace tessel::driver {

namespace {

// The ABI's functions, looked up by name.
struct Abi {
  uint32_t (*abi_version)();
  const char* (*last_error)();
  tessel_model* (*model_load)();
  void (*model_unload)(tessel_model*);
  int32_t (*num_inputs)(const tessel_model*);
  int32_t (*num_outputs)(const tessel_model*);
  int (*input_info)(const tessel_model*, int32_t, tessel_tensor_info*);
  int (*output_info)(const tessel_model*, int32_t, tessel_tensor_info*);
  int32_t (*num_kernels)(const tessel_model*);
  int (*kernel_info)(const tessel_model*, int32_t, tessel_kernel_info*);
  int64_t (*arena_bytes)(const tessel_model*);
  const char* (*device)(const tessel_model*);
  tessel_context* (*context_create)(const tessel_model*);
  void (*context_destroy)(tessel_context*);
  int (*run_profiled)(tessel_context*, const tessel_tensor*, int32_t, tessel_tensor*, int32_t, double*);
  int (*run)(tessel_context*, const tessel_tensor*, int32_t, tessel_tensor*, int32_t);
  int (*run_traced)(tessel_context*, const tessel_tensor*, int32_t, tessel_tensor*, int32_t, double*,
                    tessel_trace_span*, int32_t, int32_t*);  // null in libraries older than tracing
  int (*set_num_threads)(int32_t);
  int32_t (*get_num_threads)();
  int32_t (*output_dynamic_axis)(const tessel_model*, int32_t);
  int (*output_shape)(const tessel_context*, int32_t, int64_t*);
};

template <typename F>
void bind(void* handle, const std::string& path, const char* name, F*& out) {
  out = reinterpret_cast<F*>(dlsym(handle, name));
  TESSEL_USER_CHECK(out, Span{}) << path << " is not a Tessel model library: it lacks " << name;
}

class ModelLibrary final : public CompiledModel {
 public:
  explicit ModelLibrary(const std::string& path) {
    TESSEL_USER_CHECK(std::filesystem::exists(path), Span{}) << path << ": no such file";
    handle_ = dlopen(std::filesystem::absolute(path).c_str(), RTLD_NOW | RTLD_LOCAL);
    TESSEL_USER_CHECK(handle_, Span{}) << path << " is not a loadable shared library: " << dlerror();
    try {
      open(path);
    } catch (...) {
      close();
      throw;
    }
  }
  ~ModelLibrary() override { close(); }

  const std::vector<rt::TensorSpec>& inputs() const override { return inputs_; }
  const std::vector<rt::TensorSpec>& outputs() const override { return outputs_; }
  std::vector<KernelInfo> kernels() const override { return kernels_; }
  int64_t arena_bytes() const override { return abi_.arena_bytes(model_); }
  std::string device() const override { return abi_.device(model_); }
  void set_num_threads(int threads) override { check(abi_.set_num_threads(threads)); }
  int num_threads() const override { return abi_.get_num_threads(); }

  std::vector<Tensor> run_traced(const std::vector<Tensor>& inputs, TracedRun& trace) override {
    TESSEL_USER_CHECK(abi_.run_traced, Span{}) << path_ << " was compiled before tracing existed: compile it again";
    std::vector<tessel_tensor> in, out;
    std::vector<Tensor> outputs = bind_tensors(inputs, in, out);
    trace.kernel_seconds.assign(kernels_.size(), 0.0);
    trace.spans = record_spans(kernels_.size() * 8, [&](tessel_trace_span* spans, int32_t capacity, int32_t* count) {
      check(abi_.run_traced(context_, in.data(), int32_t(in.size()), out.data(), int32_t(out.size()),
                            trace.kernel_seconds.data(), spans, capacity, count));
    });
    return cut_data_dependent(std::move(outputs));
  }

  std::vector<Tensor> run(const std::vector<Tensor>& inputs, std::vector<double>* kernel_seconds) override {
    std::vector<tessel_tensor> in, out;
    std::vector<Tensor> outputs = bind_tensors(inputs, in, out);
    if (kernel_seconds) {
      kernel_seconds->assign(kernels_.size(), 0.0);
      check(abi_.run_profiled(context_, in.data(), int32_t(in.size()), out.data(), int32_t(out.size()),
                              kernel_seconds->data()));
    } else {
      check(abi_.run(context_, in.data(), int32_t(in.size()), out.data(), int32_t(out.size())));
    }
    return cut_data_dependent(std::move(outputs));
  }

 private:
  // Each output of data-dependent extent at the shape the last run gave it.
  std::vector<Tensor> cut_data_dependent(std::vector<Tensor> outputs) const {
    for (size_t j = 0; j < outputs.size(); ++j) {
      if (dynamic_axes_[j] < 0) continue;
      std::vector<int64_t> shape(outputs_[j].shape.size());
      check(abi_.output_shape(context_, int32_t(j), shape.data()));
      outputs[j] = cut_to_shape(std::move(outputs[j]), shape);
    }
    return outputs;
  }

  // The outputs to fill, and the C views of inputs and outputs.
  std::vector<Tensor> bind_tensors(const std::vector<Tensor>& inputs, std::vector<tessel_tensor>& in,
                                   std::vector<tessel_tensor>& out) const {
    for (const Tensor& t : inputs)
      in.push_back({const_cast<void*>(t.raw()), tessel_dtype(t.dtype()), int32_t(t.rank()), t.shape().data()});
    std::vector<Tensor> outputs;
    for (const rt::TensorSpec& spec : outputs_) outputs.emplace_back(DType(spec.dtype), spec.shape);
    for (Tensor& t : outputs) out.push_back({t.raw(), tessel_dtype(t.dtype()), int32_t(t.rank()), t.shape().data()});
    return outputs;
  }

  void open(const std::string& path) {
    path_ = path;
    bind(handle_, path, "tessel_abi_version", abi_.abi_version);
    uint32_t version = abi_.abi_version();
    TESSEL_USER_CHECK(version == TESSEL_ABI_VERSION, Span{})
        << path << " has Tessel ABI version " << version << "; this tessel reads version " << TESSEL_ABI_VERSION;
    bind(handle_, path, "tessel_last_error", abi_.last_error);
    bind(handle_, path, "tessel_model_load", abi_.model_load);
    bind(handle_, path, "tessel_model_unload", abi_.model_unload);
    bind(handle_, path, "tessel_model_num_inputs", abi_.num_inputs);
    bind(handle_, path, "tessel_model_num_outputs", abi_.num_outputs);
    bind(handle_, path, "tessel_model_input_info", abi_.input_info);
    bind(handle_, path, "tessel_model_output_info", abi_.output_info);
    bind(handle_, path, "tessel_model_num_kernels", abi_.num_kernels);
    bind(handle_, path, "tessel_model_kernel_info", abi_.kernel_info);
    bind(handle_, path, "tessel_model_arena_bytes", abi_.arena_bytes);
    bind(handle_, path, "tessel_model_device", abi_.device);
    bind(handle_, path, "tessel_context_create", abi_.context_create);
    bind(handle_, path, "tessel_context_destroy", abi_.context_destroy);
    bind(handle_, path, "tessel_context_run", abi_.run);
    bind(handle_, path, "tessel_context_run_profiled", abi_.run_profiled);
    bind(handle_, path, "tessel_set_num_threads", abi_.set_num_threads);
    bind(handle_, path, "tessel_get_num_threads", abi_.get_num_threads);
    bind(handle_, path, "tessel_model_output_dynamic_axis", abi_.output_dynamic_axis);
    bind(handle_, path, "tessel_context_output_shape", abi_.output_shape);
    abi_.run_traced = reinterpret_cast<decltype(abi_.run_traced)>(dlsym(handle_, "tessel_context_run_traced"));
    model_ = abi_.model_load();
    TESSEL_USER_CHECK(model_, Span{}) << path << ": " << abi_.last_error();
    auto spec = [](const tessel_tensor_info& info) {
      return rt::TensorSpec{info.name, uint8_t(info.dtype), std::vector<int64_t>(info.shape, info.shape + info.rank)};
    };
    for (int32_t i = 0; i < abi_.num_inputs(model_); ++i) {
      tessel_tensor_info info;
      check(abi_.input_info(model_, i, &info));
      inputs_.push_back(spec(info));
    }
    for (int32_t i = 0; i < abi_.num_outputs(model_); ++i) {
      tessel_tensor_info info;
      check(abi_.output_info(model_, i, &info));
      outputs_.push_back(spec(info));
      dynamic_axes_.push_back(abi_.output_dynamic_axis(model_, i));
    }
    for (int32_t i = 0; i < abi_.num_kernels(model_); ++i) {
      tessel_kernel_info info;
      check(abi_.kernel_info(model_, i, &info));
      kernels_.push_back({info.name, info.flops, info.bytes});
    }
    context_ = abi_.context_create(model_);
    TESSEL_USER_CHECK(context_, Span{}) << path << ": " << abi_.last_error();
  }

  void check(int status) const {
    TESSEL_USER_CHECK(status == TESSEL_OK, Span{}) << abi_.last_error();
  }

  void close() {
    if (context_) abi_.context_destroy(context_);
    if (model_) abi_.model_unload(model_);
    if (handle_) dlclose(handle_);
    context_ = nullptr;
    model_ = nullptr;
    handle_ = nullptr;
  }

  void* handle_ = nullptr;
  std::string path_;
  Abi abi_{};
  tessel_model* model_ = nullptr;
  tessel_context* context_ = nullptr;
  std::vector<rt::TensorSpec> inputs_, outputs_;
  std::vector<int32_t> dynamic_axes_;  // per output: the axis a run sizes, -1 when fixed
  std::vector<KernelInfo> kernels_;
};

}  // namespace

std::unique_ptr<CompiledModel> load_model_library(const std::string& path) {
  return std::make_unique<ModelLibrary>(path);
}

}  // namespace tessel::driver
