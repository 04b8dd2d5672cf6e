/* The contract between generated code and the model runtime: the signature of
 * a kernel, the parallel-for the kernels call, and the symbols the compiler
 * emits into a model object file. Plain C so generated code and C tests share it. */
#ifndef TESSEL_RUNTIME_KERNEL_ABI_H_
#define TESSEL_RUNTIME_KERNEL_ABI_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A kernel: args[i] points to the i-th parameter buffer (the PrimFunc's
 * inputs, then outputs), each 64-byte aligned and non-NULL. Returns 0 on success. */
typedef int32_t (*tessel_kernel_fn)(void* const* args);

/* The body of a parallel loop: runs iterations [begin, end). Must not throw. */
typedef void (*tessel_rt_parallel_body)(int64_t begin, int64_t end, void* closure);

/* Runs body over [0, n) on the runtime's thread pool, one contiguous chunk per
 * thread; returns when every chunk is done. Nested calls run inline. */
void tessel_rt_parallel_for(int64_t n, tessel_rt_parallel_body body, void* closure);

/* Called by a failing kernel on the thread that called it, just before it
 * returns a non-zero status: the reason, `format` with each "{}" replaced by
 * the next of `count` values (a failed assert: an index out of range, a
 * division by zero). The caller reads it back (src/runtime/kernel_error.h). */
void tessel_rt_kernel_error(const char* format, const int64_t* values, int32_t count);

/* Scratch memory for a buffer a kernel allocates for itself beyond its stack:
 * 64-byte aligned, NULL when no memory is left. Freed on the thread that took
 * it; the runtime keeps freed blocks for the next run (src/runtime/scratch_pool.h). */
void* tessel_rt_scratch_alloc(uint64_t bytes);
void tessel_rt_scratch_free(void* ptr);

/* The storage-only element types (ir/core/small_types.h; `format` is its
 * Format): a code decoded to a double, a double encoded to a code. */
double tessel_rt_small_decode(int32_t code, int32_t format);
int32_t tessel_rt_small_encode(double x, int32_t format, int32_t saturate);

/* Emitted by the compiler into every model object file. */
extern const uint8_t tessel_model_plan[]; /* serialize_plan's bytes (src/runtime/plan.h) */
extern const uint64_t tessel_model_plan_size;
extern const uint8_t tessel_model_weights[]; /* 64-byte aligned */
extern const uint64_t tessel_model_weights_size;
extern const tessel_kernel_fn tessel_model_kernels[]; /* indexed by Step::kernel */
extern const uint32_t tessel_model_kernel_count;

#ifdef __cplusplus
}
#endif

#endif /* TESSEL_RUNTIME_KERNEL_ABI_H_ */
