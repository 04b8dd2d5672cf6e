// What the emulator (cuda_emulator.cpp) and emulated code (the prelude,
// cuda_prelude.cpp) share, defined once: compiled into Tessel, and pasted as
// text into the prelude (TESSEL_CUDA_EMULATOR_ABI(TESSEL_CUDA_ABI_TEXT)).
// The emulated library calls the barrier through tessel_emu_sync_fn; the
// launcher runs each emulated thread through its kernel's thread entry, a
// tessel_emu_thread_fn whose closure is the launch's parameters as
// cuLaunchKernel takes them (pointers to each argument's value).
#pragma once

// clang-format off
#define TESSEL_CUDA_EMULATOR_ABI(X) X(                                                          \
  struct tessel_dim3 { unsigned x, y, z; };                                                      \
  struct tessel_emu_thread { struct tessel_dim3 block, thread; void* barrier; unsigned char* shared; }; \
  struct tessel_launch_dims { unsigned grid[3], block[3]; unsigned long long shared_bytes; int has_barrier; }; \
  typedef void (*tessel_emu_thread_fn)(const struct tessel_emu_thread* self, void* closure);    \
  typedef void (*tessel_emu_sync_fn)(void* barrier);)
// clang-format on

#define TESSEL_CUDA_ABI_TEXT(...) #__VA_ARGS__
#define TESSEL_CUDA_ABI_CODE(...) __VA_ARGS__
