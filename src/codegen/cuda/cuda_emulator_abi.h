// What the emulator (cuda_emulator.cpp) and emulated code (the prelude,
// cuda_prelude.cpp) share, defined once: compiled into Tessel, and pasted as
// text into the prelude (TESSEL_CUDA_EMULATOR_ABI(TESSEL_CUDA_ABI_TEXT)).
// The emulated library calls the launcher and the barrier through these; the
// launcher runs each emulated thread through tessel_emu_thread_fn.
#pragma once

// clang-format off
#define TESSEL_CUDA_EMULATOR_ABI(X) X(                                                          \
  struct tessel_dim3 { unsigned x, y, z; };                                                      \
  struct tessel_emu_thread { struct tessel_dim3 block, thread; void* barrier; unsigned char* shared; }; \
  struct tessel_launch_dims { unsigned grid[3], block[3]; unsigned long long shared_bytes; int has_barrier; }; \
  typedef void (*tessel_emu_thread_fn)(const struct tessel_emu_thread* self, void* closure);    \
  typedef int (*tessel_emu_launch_fn)(const struct tessel_launch_dims* dims, tessel_emu_thread_fn run, void* closure); \
  typedef void (*tessel_emu_sync_fn)(void* barrier);                                             \
  typedef void (*tessel_emu_report_fn)(const char* format, const long long* values, int count);)
// clang-format on

#define TESSEL_CUDA_ABI_TEXT(...) #__VA_ARGS__
#define TESSEL_CUDA_ABI_CODE(...) __VA_ARGS__
