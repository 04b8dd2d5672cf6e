// insert_barriers: places thread-block barriers where shared memory is
// exchanged between the threads of a GPU thread block (CUDA's __syncthreads).
//
// Inside a thread block (the body of an innermost blockIdx loop, or the whole
// function when it has threadIdx loops only), for each sequence: a barrier goes before the
// first statement that reads a shared buffer written earlier in the sequence
// (read after write) or writes one read earlier (write after read), counted
// since the last barrier; a serial loop whose body both writes and reads
// shared memory gets a barrier at the end of its body, so that the next
// iteration does not overwrite what other threads still read.
//
//   for tx in threadIdx.x:            for tx in threadIdx.x:
//     for k0 in 0..8:                   for k0 in 0..8:
//       A_s[tx] = A[k0 * 32 + tx]   ->    A_s[tx] = A[k0 * 32 + tx]
//       acc += A_s[31 - tx]               barrier()
//                                         acc += A_s[31 - tx]
//                                         barrier()
//
// Requires: barriers are legal where they land (the loops and conditions
// around them are uniform across the thread block); the interpreter reports
// a divergent barrier otherwise. Existing barriers are kept and counted.
#pragma once

#include "ir/tensor/function.h"

namespace tessel::tir_passes {

tir::PrimFunc insert_barriers(const tir::PrimFunc& func);

}  // namespace tessel::tir_passes
