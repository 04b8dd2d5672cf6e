// Why a kernel failed: generated code calls tessel_rt_kernel_error
// (kernel_abi.h) on the thread that called the kernel, just before it returns
// a non-zero status; whoever called the kernel takes the message from here.
#pragma once

#include <string>

namespace tessel::rt {

void set_kernel_error(std::string message);

// The message the last failing kernel on this thread left (empty if none),
// cleared by the call.
std::string take_kernel_error();

}  // namespace tessel::rt
