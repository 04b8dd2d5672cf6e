// The cut of a run's data-dependent outputs to their extents.
#include "src/runtime/data_dependent.h"

#include <string>

namespace tessel::rt {

void cut_data_dependent_outputs(const Plan& plan, const std::function<int64_t(uint32_t buffer)>& read_size,
                                tessel_tensor* outputs, int64_t* sizes) {
  for (size_t k = 0; k < plan.data_dependent.size(); ++k) {
    const DataDependentDim& d = plan.data_dependent[k];
    const TensorSpec& spec = plan.outputs[d.output];
    int64_t size = read_size(d.size_buffer);
    if (size < 0 || size > spec.shape[d.axis])
      throw StatusError(TESSEL_ERR_KERNEL_FAILED, "output '" + spec.name + "': the kernels found " +
                                                      std::to_string(size) + " entries along axis " +
                                                      std::to_string(d.axis) + ", outside its bound " +
                                                      std::to_string(spec.shape[d.axis]));
    compact_along_axis(outputs[d.output].data, spec.shape, dtype_bytes(spec.dtype), d.axis, size);
    if (sizes) sizes[k] = size;
  }
}

}  // namespace tessel::rt
