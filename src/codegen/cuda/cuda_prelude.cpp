// The prelude of generated CUDA C (cuda_prelude.h). Under emulation the
// kernels get their thread and block indices, shared arena and barrier from
// the launcher in Tessel (cuda_emulator.cpp), which runs each emulated thread.
#include "src/codegen/cuda/cuda_prelude.h"

#include "src/runtime/gpu/emulator_abi.h"

namespace tessel::codegen {

namespace {

// The part before the emulator's structures (emulator_abi.h).
const char* const kEmulationHead = R"PRELUDE(// ---- Tessel prelude: scalar semantics of the tensor IR
#ifdef TESSEL_CUDA_EMULATION
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
)PRELUDE";

// The rest of the emulation's definitions; the kernels' macros for either compiler.
const char* const kEmulationBody = R"PRELUDE(
// No thread_local: a dlclosed library's thread storage stays in the threads'
// tables, where LeakSanitizer's exit scan reads it. Each kernel takes its
// emulated thread as a first parameter instead.
#define TESSEL_THREAD_PARAM const tessel_emu_thread* tessel_self,
#define TESSEL_THREAD_ARG tessel_self,
// A warp shuffle as every thread of the block calls it (the generated code
// only shuffles uniformly): each thread offers its value, then takes lane + o's.
template <typename T>
static T tessel_emu_shfl_down(const tessel_emu_thread* self, T v, unsigned o) {
  unsigned t = self->thread.x;
  T* offered = (T*)self->exchange;
  offered[t] = v;
  self->sync(self->barrier);
  T got = (t & 31u) + o < 32u ? offered[t + o] : v;
  self->sync(self->barrier);
  return got;
}
#define TESSEL_SHFL_DOWN(v, o) tessel_emu_shfl_down(tessel_self, v, o)
#define threadIdx (tessel_self->thread)
#define blockIdx (tessel_self->block)
#define __syncthreads() tessel_self->sync(tessel_self->barrier)
#define TESSEL_FN static inline
#define TESSEL_KERNEL static void
#define TESSEL_RESTRICT __restrict
#define TESSEL_SHARED_ARENA unsigned char* tessel_shared = tessel_self->shared;
// A vector copy: on a GPU a misaligned vector address faults, so here too.
template <int N>
static inline void tessel_emu_copy(float* to, const float* from) {
  if ((((uintptr_t)to | (uintptr_t)from) % (N * sizeof(float))) != 0) __builtin_trap();
  std::memcpy(to, from, N * sizeof(float));
}
#define TESSEL_COPY2(to, from) tessel_emu_copy<2>(to, from)
#define TESSEL_COPY4(to, from) tessel_emu_copy<4>(to, from)
using std::isinf;
#else
#define TESSEL_FN static __device__ __forceinline__
#define TESSEL_KERNEL extern "C" __global__ void
#define TESSEL_THREAD_PARAM
#define TESSEL_THREAD_ARG
#define TESSEL_SHFL_DOWN(v, o) __shfl_down_sync(0xffffffffu, v, o)
#define TESSEL_RESTRICT __restrict__
#define TESSEL_SHARED_ARENA extern __shared__ __align__(16) unsigned char tessel_shared[];
#define TESSEL_COPY2(to, from) (*(float2*)(to) = *(const float2*)(from))
#define TESSEL_COPY4(to, from) (*(float4*)(to) = *(const float4*)(from))
#endif

)PRELUDE";

const char* const kPreludeRest = R"PRELUDE(typedef long long tessel_i64;
typedef int tessel_i32;
typedef signed char tessel_i8;
typedef unsigned char tessel_u8;
typedef unsigned short tessel_u16;
typedef short tessel_i16;
typedef unsigned int tessel_u32;
typedef unsigned long long tessel_u64;

// What the first failed assert of a launch records; the host reports it.
struct tessel_error {
  int state;
  int id;
  tessel_i64 values[4];
};

TESSEL_FN float tessel_f32_from_bits(unsigned b) {
#ifdef TESSEL_CUDA_EMULATION
  float f;
  std::memcpy(&f, &b, 4);
  return f;
#else
  return __uint_as_float(b);
#endif
}
TESSEL_FN unsigned tessel_f32_bits(float f) {
#ifdef TESSEL_CUDA_EMULATION
  unsigned b;
  std::memcpy(&b, &f, 4);
  return b;
#else
  return __float_as_uint(f);
#endif
}
TESSEL_FN double tessel_f64_from_bits(unsigned long long b) {
#ifdef TESSEL_CUDA_EMULATION
  double d;
  std::memcpy(&d, &b, 8);
  return d;
#else
  return __longlong_as_double((long long)b);
#endif
}

// BitCast: x's bytes read as To, a type of the same size.
template <typename To, typename From>
TESSEL_FN To tessel_bitcast(From x) {
#ifdef TESSEL_CUDA_EMULATION
  To y;
  std::memcpy(&y, &x, sizeof(To));
  return y;
#else
  union {
    From from;
    To to;
  } u;
  u.from = x;
  return u.to;
#endif
}

// Integer division as scalar_semantics.h: by zero gives 0, by -1 negates
// with wrap-around, floor division rounds toward minus infinity.
TESSEL_FN tessel_i64 tessel_neg(tessel_i64 a) { return (tessel_i64)(0ULL - (unsigned long long)a); }
TESSEL_FN tessel_i64 tessel_div(tessel_i64 a, tessel_i64 b) {
  return b == 0 ? 0 : b == -1 ? tessel_neg(a) : a / b;
}
TESSEL_FN tessel_i64 tessel_floordiv(tessel_i64 a, tessel_i64 b) {
  if (b == 0) return 0;
  if (b == -1) return tessel_neg(a);
  tessel_i64 q = a / b, r = a % b;
  return (r != 0 && ((r < 0) != (b < 0))) ? q - 1 : q;
}
TESSEL_FN tessel_i64 tessel_floormod(tessel_i64 a, tessel_i64 b) {
  if (b == 0 || b == -1) return 0;
  tessel_i64 r = a % b;
  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}
TESSEL_FN tessel_i64 tessel_imin(tessel_i64 a, tessel_i64 b) { return a < b ? a : b; }
TESSEL_FN tessel_i64 tessel_imax(tessel_i64 a, tessel_i64 b) { return a > b ? a : b; }
// u64: by zero gives 0; floor division is plain division.
TESSEL_FN tessel_u64 tessel_udiv(tessel_u64 a, tessel_u64 b) { return b == 0 ? 0 : a / b; }
TESSEL_FN tessel_u64 tessel_umod(tessel_u64 a, tessel_u64 b) { return b == 0 ? 0 : a % b; }
TESSEL_FN tessel_u64 tessel_umin(tessel_u64 a, tessel_u64 b) { return a < b ? a : b; }
TESSEL_FN tessel_u64 tessel_umax(tessel_u64 a, tessel_u64 b) { return a > b ? a : b; }
// Shifts as the tensor IR defines them on the int64 an integer is held in: an
// amount outside [0, 64) gives 0 (a right shift of a negative value: -1); the
// caller narrows the result to its type.
TESSEL_FN tessel_i64 tessel_shl(tessel_i64 a, tessel_i64 b) {
  return (b < 0 || b >= 64) ? 0 : (tessel_i64)((unsigned long long)a << b);
}
TESSEL_FN tessel_i64 tessel_shr(tessel_i64 a, tessel_i64 b) { return (b < 0 || b >= 64) ? (a < 0 ? -1 : 0) : a >> b; }
TESSEL_FN tessel_u64 tessel_ushl(tessel_u64 a, tessel_u64 b) { return b >= 64 ? 0 : a << b; }
TESSEL_FN tessel_u64 tessel_ushr(tessel_u64 a, tessel_u64 b) { return b >= 64 ? 0 : a >> b; }

// Float min and max: NaN when either operand is NaN.
TESSEL_FN float tessel_fminf(float a, float b) { return a != a ? a : b != b ? b : (b < a ? b : a); }
TESSEL_FN float tessel_fmaxf(float a, float b) { return a != a ? a : b != b ? b : (b > a ? b : a); }
TESSEL_FN double tessel_fmin(double a, double b) { return a != a ? a : b != b ? b : (b < a ? b : a); }
TESSEL_FN double tessel_fmax(double a, double b) { return a != a ? a : b != b ? b : (b > a ? b : a); }

// Float to integer as x86 converts: INT64_MIN for NaN and out-of-range values.
TESSEL_FN tessel_i64 tessel_f2i(double x) {
  if (!(x >= -9223372036854775808.0 && x < 9223372036854775808.0)) return (tessel_i64)0x8000000000000000ULL;
  return (tessel_i64)x;
}

TESSEL_FN float tessel_sigmoidf(float x) { return 1.0f / (1.0f + expf(-x)); }
TESSEL_FN double tessel_sigmoid(double x) { return 1.0 / (1.0 + exp(-x)); }

// 16-bit floats are stored as their bits and computed in float (dtype.cpp's conversions).
TESSEL_FN float tessel_h2f(tessel_u16 h) {
  unsigned sign = (unsigned)(h & 0x8000) << 16, exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  if (exp == 0) {
    float v = (float)mant * 5.9604644775390625e-08f;
    return sign ? -v : v;
  }
  return tessel_f32_from_bits(exp == 0x1f ? (sign | 0x7f800000u | (mant << 13)) : (sign | ((exp + 112) << 23) | (mant << 13)));
}
TESSEL_FN tessel_u16 tessel_f2h(float f) {
  unsigned x = tessel_f32_bits(f);
  unsigned short sign = (unsigned short)((x >> 16) & 0x8000);
  if (f != f) return (tessel_u16)(sign | 0x7e00);
  float a = f < 0 ? -f : f;
  if (a >= 65520.0f) return (tessel_u16)(sign | 0x7c00);
  if (a < 6.103515625e-05f) return (tessel_u16)(sign | (unsigned short)rintf(a * 16777216.0f));
  unsigned h = ((((x >> 23) & 0xff) - 112) << 10) | ((x & 0x7fffff) >> 13), rest = x & 0x1fff;
  if (rest > 0x1000 || (rest == 0x1000 && (h & 1))) ++h;
  return (tessel_u16)(sign | h);
}
TESSEL_FN float tessel_bf2f(tessel_u16 b) { return tessel_f32_from_bits((unsigned)b << 16); }
TESSEL_FN tessel_u16 tessel_f2bf(float f) {
  unsigned x = tessel_f32_bits(f);
  if (f != f) return (tessel_u16)((x >> 16) | 0x40);
  return (tessel_u16)((x + 0x7fff + ((x >> 16) & 1)) >> 16);
}
TESSEL_FN float tessel_round_h(float f) { return tessel_h2f(tessel_f2h(f)); }
TESSEL_FN float tessel_round_bf(float f) { return tessel_bf2f(tessel_f2bf(f)); }

// A reduction across a block's threads (cuda_reduction.h), called by every
// thread of a one-dimensional block of a multiple of 32 threads: each warp
// combines its values by shuffles, warp 0 combines the warps' through
// scratch (one value per warp); thread 0 returns the block's. The emulator,
// where each shuffle costs two barriers of OS threads, combines through
// scratch (a value per thread) in thread 0, unless a test asks for the
// shuffles (TESSEL_EMULATE_WARP_SHUFFLES).
#if defined(TESSEL_CUDA_EMULATION) && !defined(TESSEL_EMULATE_WARP_SHUFFLES)
#define TESSEL_BLOCK_REDUCE(NAME, T, COMBINE, IDENTITY)                           \
  TESSEL_FN T NAME(TESSEL_THREAD_PARAM T v, T* scratch, unsigned threads) {       \
    unsigned t = threadIdx.x;                                                     \
    scratch[t] = v;                                                               \
    __syncthreads();                                                              \
    if (t == 0)                                                                   \
      for (unsigned i = 1; i < threads; ++i) v = COMBINE(v, scratch[i]);          \
    __syncthreads();                                                              \
    return v;                                                                     \
  }
#else
#define TESSEL_BLOCK_REDUCE(NAME, T, COMBINE, IDENTITY)                           \
  TESSEL_FN T NAME(TESSEL_THREAD_PARAM T v, T* scratch, unsigned threads) {       \
    unsigned t = threadIdx.x;                                                     \
    for (unsigned o = 16; o > 0; o >>= 1) v = COMBINE(v, TESSEL_SHFL_DOWN(v, o)); \
    if ((t & 31u) == 0) scratch[t >> 5] = v;                                      \
    __syncthreads();                                                              \
    v = t < threads / 32 ? scratch[t] : (T)(IDENTITY);                            \
    for (unsigned o = 16; o > 0; o >>= 1) v = COMBINE(v, TESSEL_SHFL_DOWN(v, o)); \
    __syncthreads();                                                              \
    return v;                                                                     \
  }
#endif
#define TESSEL_ADD(a, b) ((a) + (b))
#define TESSEL_MUL(a, b) ((a) * (b))
TESSEL_BLOCK_REDUCE(tessel_block_add_f32, float, TESSEL_ADD, 0.0f)
TESSEL_BLOCK_REDUCE(tessel_block_mul_f32, float, TESSEL_MUL, 1.0f)
TESSEL_BLOCK_REDUCE(tessel_block_max_f32, float, tessel_fmaxf, -tessel_f32_from_bits(0x7f800000u))
TESSEL_BLOCK_REDUCE(tessel_block_min_f32, float, tessel_fminf, tessel_f32_from_bits(0x7f800000u))
TESSEL_BLOCK_REDUCE(tessel_block_add_f64, double, TESSEL_ADD, 0.0)
TESSEL_BLOCK_REDUCE(tessel_block_mul_f64, double, TESSEL_MUL, 1.0)
TESSEL_BLOCK_REDUCE(tessel_block_max_f64, double, tessel_fmax, -tessel_f64_from_bits(0x7ff0000000000000ULL))
TESSEL_BLOCK_REDUCE(tessel_block_min_f64, double, tessel_fmin, tessel_f64_from_bits(0x7ff0000000000000ULL))

// The first failing thread of a launch records which assert and its values.
TESSEL_FN void tessel_fail(tessel_error* e, int id, tessel_i64 v0, tessel_i64 v1, tessel_i64 v2, tessel_i64 v3) {
#ifdef TESSEL_CUDA_EMULATION
  int expected = 0;
  if (!__atomic_compare_exchange_n(&e->state, &expected, 1, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) return;
#else
  if (atomicCAS(&e->state, 0, 1) != 0) return;
#endif
  e->id = id;
  e->values[0] = v0;
  e->values[1] = v1;
  e->values[2] = v2;
  e->values[3] = v3;
}

// ---- end of the prelude
)PRELUDE";

}  // namespace

const std::string& cuda_prelude() {
  static const std::string text = std::string(kEmulationHead) +
                                  TESSEL_CUDA_EMULATOR_ABI(TESSEL_CUDA_ABI_TEXT) + kEmulationBody +
                                  kPreludeRest;
  return text;
}

}  // namespace tessel::codegen
