/* The C ABI of a model compiled by Tessel.
 *
 * `tessel compile model.onnx -o model.so` writes a self-contained shared
 * library: the kernels, the execution plan and the weights, and the functions
 * below. Link it (`cc app.c ./model.so`) or dlopen it; it needs only the C and
 * C++ system libraries at run time.
 *
 *   tessel_model* m = tessel_model_load();
 *   tessel_context* ctx = tessel_context_create(m);
 *   tessel_tensor in = {x, TESSEL_F32, 4, shape}, out = {y, TESSEL_F32, 2, out_shape};
 *   if (tessel_context_run(ctx, &in, 1, &out, 1) != 0) puts(tessel_last_error());
 *   tessel_context_destroy(ctx);
 *   tessel_model_unload(m);
 *
 * Functions that can fail return 0 (or a non-NULL pointer) on success and a
 * non-zero TESSEL_ERR_* code (or NULL) on failure; tessel_last_error() then
 * describes the failure. A model is read-only once loaded; a context owns the
 * scratch memory of one run at a time, so two threads run concurrently with
 * one context each. */
#ifndef TESSEL_RUNTIME_H_
#define TESSEL_RUNTIME_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped when a function or struct below changes incompatibly, or a function
 * readers require is added (2: tessel_model_device; 3: tessel_context_run_device;
 * 4: tessel_model_output_dynamic_axis, tessel_context_output_shape). */
#define TESSEL_ABI_VERSION 4

/* Element types; the values are part of the ABI (and of the plan format). */
typedef enum tessel_dtype {
  TESSEL_F32 = 0,
  TESSEL_F16 = 1,
  TESSEL_BF16 = 2,
  TESSEL_F64 = 3,
  TESSEL_I8 = 4,
  TESSEL_U8 = 5,
  TESSEL_I32 = 6,
  TESSEL_I64 = 7,
  TESSEL_BOOL = 8, /* one byte, 0 or 1 */
  TESSEL_I16 = 9,
  TESSEL_U16 = 10,
  TESSEL_U32 = 11,
  TESSEL_U64 = 12,
  /* One code per byte; the 4- and 2-bit types in the low bits of their byte. */
  TESSEL_F8E4M3FN = 13,
  TESSEL_F8E4M3FNUZ = 14,
  TESSEL_F8E5M2 = 15,
  TESSEL_F8E5M2FNUZ = 16,
  TESSEL_F8E8M0 = 17,
  TESSEL_F4E2M1 = 18,
  TESSEL_I4 = 19,
  TESSEL_U4 = 20,
  TESSEL_I2 = 21,
  TESSEL_U2 = 22
} tessel_dtype;

typedef enum tessel_status {
  TESSEL_OK = 0,
  TESSEL_ERR_INVALID_ARGUMENT = 1, /* NULL pointer, index out of range, wrong count */
  TESSEL_ERR_SHAPE_MISMATCH = 2,   /* a tensor's rank or dimensions differ from the model's */
  TESSEL_ERR_DTYPE_MISMATCH = 3,   /* a tensor's dtype differs from the model's */
  TESSEL_ERR_OUT_OF_MEMORY = 4,
  TESSEL_ERR_CORRUPT_MODEL = 5,     /* the embedded plan or weights fail their checks or checksums */
  TESSEL_ERR_KERNEL_FAILED = 6,     /* a kernel returned an error */
  TESSEL_ERR_UNSUPPORTED_CPU = 7,   /* the model was compiled for CPU features this CPU lacks */
  TESSEL_ERR_UNSUPPORTED_DEVICE = 8 /* no CUDA driver or GPU, or a GPU older than the code's architecture */
} tessel_status;

/* A dense, row-major tensor owned by the caller. */
typedef struct tessel_tensor {
  void* data;
  tessel_dtype dtype;
  int32_t rank;
  const int64_t* shape; /* rank dimensions */
} tessel_tensor;

/* What the model expects of an input or produces as an output. The strings
 * and the shape belong to the model and live until it is unloaded. */
typedef struct tessel_tensor_info {
  const char* name;
  tessel_dtype dtype;
  int32_t rank;
  const int64_t* shape;
} tessel_tensor_info;

/* One kernel of the execution plan, for profiles. */
typedef struct tessel_kernel_info {
  const char* name;
  double flops;  /* floating-point operations of one run */
  double bytes;  /* bytes of its parameters (read and written), once each */
} tessel_kernel_info;

typedef struct tessel_model tessel_model;
typedef struct tessel_context tessel_context;

uint32_t tessel_abi_version(void);   /* TESSEL_ABI_VERSION of the library */
const char* tessel_version(void);    /* the Tessel release that compiled it, "0.1.0" */
/* The message of the calling thread's last failure ("" if none). */
const char* tessel_last_error(void);
/* The TESSEL_ERR_* code of the calling thread's last failure (TESSEL_OK if
 * none): how a caller tells why a function returning NULL failed. */
int32_t tessel_last_status(void);

/* Checks and loads the model embedded in this library: the plan's structure,
 * the checksums of the plan and the weights (TESSEL_ERR_CORRUPT_MODEL), the
 * CPU features the kernels were compiled for (TESSEL_ERR_UNSUPPORTED_CPU) and
 * TESSEL_NUM_THREADS when set (TESSEL_ERR_INVALID_ARGUMENT unless a whole
 * number from 1 to 1024). A library compiled for a GPU checks its GPU
 * program (TESSEL_ERR_CORRUPT_MODEL), opens the CUDA driver ($TESSEL_LIBCUDA,
 * else libcuda.so.1) and the first GPU, and uploads the weights
 * (TESSEL_ERR_UNSUPPORTED_DEVICE without a driver or GPU, or with a GPU older
 * than the code's architecture). */
tessel_model* tessel_model_load(void);
void tessel_model_unload(tessel_model* model); /* NULL is ignored */

int32_t tessel_model_num_inputs(const tessel_model* model);
int32_t tessel_model_num_outputs(const tessel_model* model);
int tessel_model_input_info(const tessel_model* model, int32_t index, tessel_tensor_info* info);
int tessel_model_output_info(const tessel_model* model, int32_t index, tessel_tensor_info* info);
int32_t tessel_model_num_kernels(const tessel_model* model);
int tessel_model_kernel_info(const tessel_model* model, int32_t index, tessel_kernel_info* info);
/* Peak bytes of the scratch arena one context allocates (the static memory plan). */
int64_t tessel_model_arena_bytes(const tessel_model* model);
/* Outputs whose extent the data decides (NonZero, Compress,
 * NonMaxSuppression): the axis of output `index` that a run sizes, -1 for an
 * output of fixed shape, -2 for a NULL model or an index out of range.
 * tessel_model_output_info gives that axis's upper bound: the caller passes an
 * output of that shape, and a run writes the output dense at its extent in the
 * front of the buffer; tessel_context_output_shape then gives the shape. */
int32_t tessel_model_output_dynamic_axis(const tessel_model* model, int32_t index);
/* Output `index`'s shape as of the context's last successful run (rank: as
 * tessel_model_output_info's); fails for a data-dependent output before a
 * successful run. */
int tessel_context_output_shape(const tessel_context* context, int32_t index, int64_t* shape);
/* What the model's kernels run on: "cpu", or "cuda: " and the GPU's name
 * ("cuda: NVIDIA H200 (sm_90)", "cuda: the CUDA emulator on this CPU").
 * Valid while the model is loaded; NULL (with tessel_last_error) for a NULL model. */
const char* tessel_model_device(const tessel_model* model);

tessel_context* tessel_context_create(const tessel_model* model);
void tessel_context_destroy(tessel_context* context); /* NULL is ignored */

/* Runs the model once. inputs and outputs are in the model's order, with the
 * model's dtypes and shapes; outputs are written in place. */
int tessel_context_run(tessel_context* context, const tessel_tensor* inputs, int32_t num_inputs,
                       tessel_tensor* outputs, int32_t num_outputs);
/* For a model compiled for a GPU: runs it on device memory, without copies
 * to or from the host. inputs[i].data and outputs[j].data are device
 * pointers (CUdeviceptr, allocated in the primary context of the GPU the model
 * loaded on: tessel_model_device names it); the launches are queued on
 * `stream` (a CUstream of that context; NULL: the default stream), and the
 * call returns once the stream has run them, so that a failed run-time check
 * is reported (TESSEL_ERR_KERNEL_FAILED). A buffer not 16-byte aligned is
 * staged through one of the model's (a device copy). Under emulation device memory is
 * host memory and there is one queue. A CPU model returns
 * TESSEL_ERR_UNSUPPORTED_DEVICE. */
int tessel_context_run_device(tessel_context* context, const tessel_tensor* inputs, int32_t num_inputs,
                              tessel_tensor* outputs, int32_t num_outputs, void* stream);
/* As tessel_context_run, and writes each kernel's wall time of this run in
 * seconds to kernel_seconds[tessel_model_num_kernels(model)]. */
int tessel_context_run_profiled(tessel_context* context, const tessel_tensor* inputs,
                                int32_t num_inputs, tessel_tensor* outputs, int32_t num_outputs,
                                double* kernel_seconds);

/* A span of a traced run: a step of the plan (kind TESSEL_TRACE_STEP, on the
 * calling thread, thread 0) or one thread's chunk of a parallel loop inside
 * that step (TESSEL_TRACE_CHUNK; thread 0 is the caller, 1.. the pool's
 * workers), in seconds from the start of the run. */
typedef enum tessel_trace_kind { TESSEL_TRACE_STEP = 0, TESSEL_TRACE_CHUNK = 1 } tessel_trace_kind;
typedef struct tessel_trace_span {
  int32_t step;
  int32_t thread;
  int32_t kind; /* tessel_trace_kind */
  int32_t reserved;
  double begin_seconds;
  double end_seconds;
} tessel_trace_span;

/* As tessel_context_run_profiled, and records the run's spans into
 * spans[capacity]; *num_spans receives how many there were (more than
 * capacity: the rest were dropped). One traced run at a time per process:
 * TESSEL_ERR_INVALID_ARGUMENT while another is in progress. */
int tessel_context_run_traced(tessel_context* context, const tessel_tensor* inputs, int32_t num_inputs,
                              tessel_tensor* outputs, int32_t num_outputs, double* kernel_seconds,
                              tessel_trace_span* spans, int32_t capacity, int32_t* num_spans);

/* The worker threads of the library's thread pool, 1 to 1024 (default:
 * TESSEL_NUM_THREADS from the environment, else the cores this process may
 * run on). Takes effect for the next run. More threads than cores are
 * honoured: the pool's threads then block instead of spinning while they wait. */
int tessel_set_num_threads(int32_t num_threads);
int32_t tessel_get_num_threads(void);

#ifdef __cplusplus
}
#endif

#endif /* TESSEL_RUNTIME_H_ */
