// What the emulator's launcher (emulated_device.cpp) and emulated code (the
// prelude, src/codegen/cuda/cuda_prelude.cpp) share, defined once: compiled
// into the runtime, and pasted as text into the prelude
// (TESSEL_CUDA_EMULATOR_ABI(TESSEL_CUDA_ABI_TEXT)). Emulated code exports
// its kernels' thread entries as tessel_emu_kernels[tessel_emu_kernel_count];
// the launcher runs each emulated thread through one, its closure the
// launch's parameters as cuLaunchKernel takes them (pointers to each
// argument's value), and the thread waits at a barrier through its sync.
#pragma once

// clang-format off
#define TESSEL_CUDA_EMULATOR_ABI(X) X(                                                          \
  struct tessel_dim3 { unsigned x, y, z; };                                                      \
  typedef void (*tessel_emu_sync_fn)(void* barrier);                                             \
  struct tessel_emu_thread { struct tessel_dim3 block, thread; void* barrier; tessel_emu_sync_fn sync; unsigned char* shared; \
                             unsigned char* exchange; };                                         \
  typedef void (*tessel_emu_thread_fn)(const struct tessel_emu_thread* self, void* closure);    \
  struct tessel_emu_kernel { const char* name; tessel_emu_thread_fn run; };)
// clang-format on

#define TESSEL_CUDA_ABI_TEXT(...) #__VA_ARGS__
#define TESSEL_CUDA_ABI_CODE(...) __VA_ARGS__
