/* Runs any model compiled by Tessel through its C ABI (include/tessel/runtime.h) alone:
 *
 *   cc -I include examples/c_api/main.c path/to/model.so -o app && ./app
 *
 * Prints the inputs and outputs, fills every input with a deterministic pattern
 * (element i holds i % 7, as the input's dtype), runs once, prints the first values
 * of each output and the arena size. Every failure prints tessel_last_error(). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tessel/runtime.h"

static const char* dtype_name(tessel_dtype d) {
  static const char* const kNames[] = {"f32", "f16", "bf16", "f64", "i8", "u8", "i32", "i64", "bool"};
  return (int)d >= 0 && (int)d < 9 ? kNames[d] : "invalid";
}

static size_t dtype_bytes(tessel_dtype d) {
  switch (d) {
    case TESSEL_F64:
    case TESSEL_I64: return 8;
    case TESSEL_F32:
    case TESSEL_I32: return 4;
    case TESSEL_F16:
    case TESSEL_BF16: return 2;
    default: return 1;
  }
}

static const char* status_name(int status) {
  static const char* const kNames[] = {"OK",
                                       "INVALID_ARGUMENT",
                                       "SHAPE_MISMATCH",
                                       "DTYPE_MISMATCH",
                                       "OUT_OF_MEMORY",
                                       "CORRUPT_MODEL",
                                       "KERNEL_FAILED"};
  return status >= 0 && status < 7 ? kNames[status] : "unknown status";
}

static int report(const char* what, int status) {
  fprintf(stderr, "%s failed (%s): %s\n", what, status_name(status), tessel_last_error());
  return status ? status : 1;
}

static size_t elements(const tessel_tensor_info* info) {
  size_t n = 1;
  for (int32_t d = 0; d < info->rank; ++d) n *= (size_t)info->shape[d];
  return n;
}

static void print_info(const char* kind, int32_t index, const tessel_tensor_info* info) {
  printf("%s %d '%s' %s [", kind, (int)index, info->name, dtype_name(info->dtype));
  for (int32_t d = 0; d < info->rank; ++d) printf("%s%lld", d ? "," : "", (long long)info->shape[d]);
  printf("]\n");
}

/* f16/bf16 get the bit pattern of small values only through their integer view; the pattern
 * for them is the raw value i % 7 (a tiny subnormal), enough to exercise the model. */
static void fill(void* data, tessel_dtype d, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    int v = (int)(i % 7);
    switch (d) {
      case TESSEL_F32: ((float*)data)[i] = (float)v; break;
      case TESSEL_F64: ((double*)data)[i] = v; break;
      case TESSEL_I32: ((int32_t*)data)[i] = v; break;
      case TESSEL_I64: ((int64_t*)data)[i] = v; break;
      case TESSEL_F16:
      case TESSEL_BF16: ((uint16_t*)data)[i] = (uint16_t)v; break;
      case TESSEL_BOOL: ((uint8_t*)data)[i] = (uint8_t)(v & 1); break;
      default: ((uint8_t*)data)[i] = (uint8_t)v; break;
    }
  }
}

static void print_values(const char* name, const void* data, tessel_dtype d, size_t n) {
  printf("%s:", name);
  for (size_t i = 0; i < n && i < 8; ++i) {
    switch (d) {
      case TESSEL_F32: printf(" %g", ((const float*)data)[i]); break;
      case TESSEL_F64: printf(" %g", ((const double*)data)[i]); break;
      case TESSEL_I32: printf(" %d", ((const int32_t*)data)[i]); break;
      case TESSEL_I64: printf(" %lld", (long long)((const int64_t*)data)[i]); break;
      case TESSEL_I8: printf(" %d", ((const int8_t*)data)[i]); break;
      case TESSEL_F16:
      case TESSEL_BF16: printf(" 0x%04x", ((const uint16_t*)data)[i]); break;
      default: printf(" %u", ((const uint8_t*)data)[i]); break;
    }
  }
  printf("%s\n", n > 8 ? " ..." : "");
}

/* Describes and allocates count tensors from their infos; inputs get the pattern. */
static int make_tensors(const tessel_model* m, int32_t count, int input, tessel_tensor* tensors,
                        tessel_tensor_info* infos) {
  for (int32_t i = 0; i < count; ++i) {
    int status = input ? tessel_model_input_info(m, i, &infos[i]) : tessel_model_output_info(m, i, &infos[i]);
    if (status) return report(input ? "tessel_model_input_info" : "tessel_model_output_info", status);
    print_info(input ? "input" : "output", i, &infos[i]);
    size_t n = elements(&infos[i]);
    void* data = calloc(n ? n : 1, dtype_bytes(infos[i].dtype));
    if (!data) return fprintf(stderr, "out of memory\n"), TESSEL_ERR_OUT_OF_MEMORY;
    if (input) fill(data, infos[i].dtype, n);
    tensors[i] = (tessel_tensor){data, infos[i].dtype, infos[i].rank, infos[i].shape};
  }
  return 0;
}

static int run_model(tessel_model* m) {
  int32_t n_in = tessel_model_num_inputs(m), n_out = tessel_model_num_outputs(m);
  if (n_in < 0 || n_out < 0) return report("counting the tensors", TESSEL_ERR_INVALID_ARGUMENT);
  tessel_tensor* in = calloc((size_t)n_in + 1, sizeof *in);
  tessel_tensor* out = calloc((size_t)n_out + 1, sizeof *out);
  tessel_tensor_info* infos = calloc((size_t)(n_in + n_out) + 1, sizeof *infos);
  tessel_context* ctx = NULL;
  int status = !in || !out || !infos ? TESSEL_ERR_OUT_OF_MEMORY : 0;
  if (!status) status = make_tensors(m, n_in, 1, in, infos);
  if (!status) status = make_tensors(m, n_out, 0, out, infos + n_in);
  if (!status && !(ctx = tessel_context_create(m)))
    status = report("tessel_context_create", TESSEL_ERR_OUT_OF_MEMORY);
  if (!status) {
    int run = tessel_context_run(ctx, in, n_in, out, n_out);
    if (run) status = report("tessel_context_run", run);
  }
  int64_t run_shape[64];
  for (int32_t j = 0; !status && j < n_out; ++j) {
    tessel_tensor_info shown = infos[n_in + j];
    if (tessel_model_output_dynamic_axis(m, j) >= 0) { /* the run sized it within the bound */
      int got = shown.rank <= 64 ? tessel_context_output_shape(ctx, j, run_shape) : TESSEL_ERR_INVALID_ARGUMENT;
      if (got) {
        status = report("tessel_context_output_shape", got);
        break;
      }
      shown.shape = run_shape;
      print_info("run sized output", j, &shown);
    }
    print_values(shown.name, out[j].data, out[j].dtype, elements(&shown));
  }
  if (!status) printf("arena bytes: %lld\n", (long long)tessel_model_arena_bytes(m));
  tessel_context_destroy(ctx);
  for (int32_t i = 0; in && i < n_in; ++i) free(in[i].data);
  for (int32_t j = 0; out && j < n_out; ++j) free(out[j].data);
  free(in), free(out), free(infos);
  return status;
}

int main(void) {
  if (tessel_abi_version() != TESSEL_ABI_VERSION) {
    fprintf(stderr, "the model has ABI version %u, this program %d\n", tessel_abi_version(),
            TESSEL_ABI_VERSION);
    return 1;
  }
  printf("model compiled by Tessel %s\n", tessel_version());
  tessel_model* m = tessel_model_load();
  if (!m) return report("tessel_model_load", TESSEL_ERR_CORRUPT_MODEL);
  int status = run_model(m);
  tessel_model_unload(m);
  if (!status) printf("OK\n");
  return status;
}
