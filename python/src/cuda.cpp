// The CUDA backend's face from Python (framework/core/cuda.h): whether a GPU is usable and why not.
// Nothing here loads libember_cuda.so until asked; ember/cuda.py wraps these as ember.cuda.*.
#include "bindings.h"

namespace ember::py {

void bind_cuda(nb::module_& m) {
  m.def("cuda_available", &cuda_available);
  m.def("_cuda_built", &cuda::built_with_cuda);
  m.def("_cuda_unavailable_reason", &cuda::unavailable_reason);
  m.def("_cuda_device_name", &cuda::device_name);
  m.def("_cuda_synchronize", &cuda::synchronize, release_gil());
}

}  // namespace ember::py
