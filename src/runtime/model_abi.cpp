// The C ABI of include/tessel/runtime.h over the symbols the compiler embeds
// in a model library (kernel_abi.h). No exception crosses the ABI: each entry
// point catches, stores the message for tessel_last_error and returns a status.
// The ABI's functions are the only symbols of a model library with default
// visibility; runtime.h must come first so its declarations carry it.
#pragma GCC visibility push(default)
#include "tessel/runtime.h"
#pragma GCC visibility pop

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <new>
#include <string>

#include "src/runtime/model_engine.h"
#include "src/runtime/thread_pool.h"
#include "src/runtime/tracer.h"

#ifndef TESSEL_VERSION_STRING
#error "TESSEL_VERSION_STRING is set by src/runtime/CMakeLists.txt from PROJECT_VERSION"
#endif

struct tessel_model {
  std::unique_ptr<tessel::rt::ModelEngine> engine;
  std::vector<tessel_tensor_info> input_info, output_info;
};

struct tessel_context {
  const tessel_model* model;
  std::unique_ptr<tessel::rt::ModelEngine::Context> state;
};

namespace {

using tessel::rt::StatusError;

thread_local std::string t_last_error;
thread_local int32_t t_last_status = TESSEL_OK;

int fail(int status, const std::string& message) {
  t_last_error = message;
  t_last_status = status;
  return status;
}

// Runs f, turning any exception into a status and tessel_last_error's message.
template <typename F>
int guarded(F&& f) {
  try {
    f();
    return TESSEL_OK;
  } catch (const StatusError& e) {
    return fail(e.status(), e.what());
  } catch (const std::bad_alloc&) {
    return fail(TESSEL_ERR_OUT_OF_MEMORY, "out of memory");
  } catch (const std::exception& e) {
    return fail(TESSEL_ERR_INVALID_ARGUMENT, e.what());
  } catch (...) {
    return fail(TESSEL_ERR_INVALID_ARGUMENT, "unknown error");
  }
}

std::vector<tessel_tensor_info> infos_of(const std::vector<tessel::rt::TensorSpec>& specs) {
  std::vector<tessel_tensor_info> out;
  for (const tessel::rt::TensorSpec& s : specs)
    out.push_back({s.name.c_str(), tessel_dtype(s.dtype), int32_t(s.shape.size()), s.shape.data()});
  return out;
}

int tensor_info(const tessel_model* model, int32_t index, tessel_tensor_info* info, bool input) {
  const char* kind = input ? "input" : "output";
  if (!model || !info)
    return fail(TESSEL_ERR_INVALID_ARGUMENT, std::string(kind) + " info: model or info is NULL");
  const std::vector<tessel_tensor_info>& infos = input ? model->input_info : model->output_info;
  if (index < 0 || size_t(index) >= infos.size())
    return fail(TESSEL_ERR_INVALID_ARGUMENT, std::string(kind) + " index " + std::to_string(index) +
                                                 " out of range (" + std::to_string(infos.size()) + " " +
                                                 kind + "s)");
  *info = infos[size_t(index)];
  return TESSEL_OK;
}

int run(tessel_context* context, const tessel_tensor* inputs, int32_t num_inputs, tessel_tensor* outputs,
        int32_t num_outputs, double* kernel_seconds) {
  if (!context) return fail(TESSEL_ERR_INVALID_ARGUMENT, "tessel_context_run: context is NULL");
  return guarded([&] {
    context->model->engine->run(*context->state, inputs, num_inputs, outputs, num_outputs, kernel_seconds);
  });
}

}  // namespace

namespace tessel::rt {

void ModelEngine::run_device(Context&, const tessel_tensor*, int32_t, tessel_tensor*, int32_t, void*) const {
  throw StatusError(TESSEL_ERR_UNSUPPORTED_DEVICE,
                    "tessel_context_run_device: this model runs on the CPU; device memory is for a model "
                    "compiled for a GPU");
}

}  // namespace tessel::rt

extern "C" {

uint32_t tessel_abi_version(void) {
  return TESSEL_ABI_VERSION;
}

const char* tessel_version(void) {
  return TESSEL_VERSION_STRING;
}

const char* tessel_last_error(void) {
  return t_last_error.c_str();
}

int32_t tessel_last_status(void) {
  return t_last_status;
}

tessel_model* tessel_model_load(void) {
  tessel_model* model = nullptr;
  int status = guarded([&] {
    auto m = std::unique_ptr<tessel_model>(new tessel_model{tessel::rt::load_model_engine(), {}, {}});
    m->input_info = infos_of(m->engine->plan().inputs);
    m->output_info = infos_of(m->engine->plan().outputs);
    model = m.release();
  });
  return status == TESSEL_OK ? model : nullptr;
}

void tessel_model_unload(tessel_model* model) {
  delete model;
}

int32_t tessel_model_num_inputs(const tessel_model* model) {
  if (!model) return fail(TESSEL_ERR_INVALID_ARGUMENT, "tessel_model_num_inputs: model is NULL"), -1;
  return int32_t(model->input_info.size());
}

int32_t tessel_model_num_outputs(const tessel_model* model) {
  if (!model) return fail(TESSEL_ERR_INVALID_ARGUMENT, "tessel_model_num_outputs: model is NULL"), -1;
  return int32_t(model->output_info.size());
}

int tessel_model_input_info(const tessel_model* model, int32_t index, tessel_tensor_info* info) {
  return tensor_info(model, index, info, true);
}

int tessel_model_output_info(const tessel_model* model, int32_t index, tessel_tensor_info* info) {
  return tensor_info(model, index, info, false);
}

int32_t tessel_model_num_kernels(const tessel_model* model) {
  if (!model) return fail(TESSEL_ERR_INVALID_ARGUMENT, "tessel_model_num_kernels: model is NULL"), -1;
  return int32_t(model->engine->plan().steps.size());
}

int tessel_model_kernel_info(const tessel_model* model, int32_t index, tessel_kernel_info* info) {
  if (!model || !info)
    return fail(TESSEL_ERR_INVALID_ARGUMENT, "tessel_model_kernel_info: model or info is NULL");
  const std::vector<tessel::rt::Step>& steps = model->engine->plan().steps;
  if (index < 0 || size_t(index) >= steps.size())
    return fail(TESSEL_ERR_INVALID_ARGUMENT, "kernel index " + std::to_string(index) + " out of range (" +
                                                 std::to_string(steps.size()) + " kernels)");
  const tessel::rt::Step& s = steps[size_t(index)];
  *info = {s.name.c_str(), s.flops, s.bytes};
  return TESSEL_OK;
}

int64_t tessel_model_arena_bytes(const tessel_model* model) {
  if (!model) return fail(TESSEL_ERR_INVALID_ARGUMENT, "tessel_model_arena_bytes: model is NULL"), -1;
  return int64_t(model->engine->plan().arena_bytes);
}

int32_t tessel_model_output_dynamic_axis(const tessel_model* model, int32_t index) {
  tessel_tensor_info info;
  if (tensor_info(model, index, &info, false) != TESSEL_OK) return -2;
  for (const tessel::rt::DataDependentDim& d : model->engine->plan().data_dependent)
    if (d.output == uint32_t(index)) return int32_t(d.axis);
  return -1;
}

int tessel_context_output_shape(const tessel_context* context, int32_t index, int64_t* shape) {
  if (!context || !shape)
    return fail(TESSEL_ERR_INVALID_ARGUMENT, "tessel_context_output_shape: context or shape is NULL");
  tessel_tensor_info info;
  if (int status = tensor_info(context->model, index, &info, false); status != TESSEL_OK) return status;
  std::copy(info.shape, info.shape + info.rank, shape);
  const std::vector<tessel::rt::DataDependentDim>& dims = context->model->engine->plan().data_dependent;
  const std::vector<int64_t>& sizes = context->state->data_dependent_sizes;
  for (size_t k = 0; k < dims.size(); ++k) {
    if (dims[k].output != uint32_t(index)) continue;
    if (sizes.size() != dims.size())
      return fail(TESSEL_ERR_INVALID_ARGUMENT, "tessel_context_output_shape: output '" +
                                                   std::string(info.name) +
                                                   "' has an extent the data decides, and the context has no "
                                                   "successful run yet");
    shape[dims[k].axis] = sizes[k];
  }
  return TESSEL_OK;
}

const char* tessel_model_device(const tessel_model* model) {
  if (!model) return fail(TESSEL_ERR_INVALID_ARGUMENT, "tessel_model_device: model is NULL"), nullptr;
  return model->engine->device().c_str();
}

tessel_context* tessel_context_create(const tessel_model* model) {
  if (!model) return fail(TESSEL_ERR_INVALID_ARGUMENT, "tessel_context_create: model is NULL"), nullptr;
  tessel_context* context = nullptr;
  int status = guarded([&] {
    auto c = std::make_unique<tessel_context>();
    c->model = model;
    c->state = model->engine->new_context();
    context = c.release();
  });
  return status == TESSEL_OK ? context : nullptr;
}

void tessel_context_destroy(tessel_context* context) {
  delete context;
}

int tessel_context_run(tessel_context* context, const tessel_tensor* inputs, int32_t num_inputs,
                       tessel_tensor* outputs, int32_t num_outputs) {
  return run(context, inputs, num_inputs, outputs, num_outputs, nullptr);
}

int tessel_context_run_device(tessel_context* context, const tessel_tensor* inputs, int32_t num_inputs,
                              tessel_tensor* outputs, int32_t num_outputs, void* stream) {
  if (!context) return fail(TESSEL_ERR_INVALID_ARGUMENT, "tessel_context_run_device: context is NULL");
  return guarded([&] {
    context->model->engine->run_device(*context->state, inputs, num_inputs, outputs, num_outputs, stream);
  });
}

int tessel_context_run_profiled(tessel_context* context, const tessel_tensor* inputs, int32_t num_inputs,
                                tessel_tensor* outputs, int32_t num_outputs, double* kernel_seconds) {
  if (!kernel_seconds)
    return fail(TESSEL_ERR_INVALID_ARGUMENT, "tessel_context_run_profiled: kernel_seconds is NULL");
  return run(context, inputs, num_inputs, outputs, num_outputs, kernel_seconds);
}

int tessel_context_run_traced(tessel_context* context, const tessel_tensor* inputs, int32_t num_inputs,
                              tessel_tensor* outputs, int32_t num_outputs, double* kernel_seconds,
                              tessel_trace_span* spans, int32_t capacity, int32_t* num_spans) {
  if (!kernel_seconds || !num_spans || capacity < 0 || (capacity > 0 && !spans))
    return fail(TESSEL_ERR_INVALID_ARGUMENT,
                "tessel_context_run_traced: kernel_seconds or num_spans is NULL, or spans do not fit capacity");
  if (!tessel::rt::Tracer::begin(spans, capacity))
    return fail(TESSEL_ERR_INVALID_ARGUMENT, "tessel_context_run_traced: another traced run is in progress");
  int status = run(context, inputs, num_inputs, outputs, num_outputs, kernel_seconds);
  *num_spans = tessel::rt::Tracer::end();
  return status;
}

int tessel_set_num_threads(int32_t num_threads) {
  if (num_threads < 1 || num_threads > tessel::rt::ThreadPool::kMaxThreads)
    return fail(TESSEL_ERR_INVALID_ARGUMENT, "tessel_set_num_threads: " + std::to_string(num_threads) +
                                                 " threads (1.." +
                                                 std::to_string(tessel::rt::ThreadPool::kMaxThreads) + ")");
  return guarded([&] { tessel::rt::set_num_threads(num_threads); });
}

int32_t tessel_get_num_threads(void) {
  int32_t n = -1;
  guarded([&] { n = tessel::rt::get_num_threads(); });
  return n;
}

}  // extern "C"
