// The attention op's CUDA entry points on tensors (ops/cuda_kernels.h): the dtype dispatch onto
// the raw-pointer kernels of attention.cu. Part of libember_cuda.so.
#include "framework/core/dtype.h"
#include "ops/attention/cuda/attention_cuda.h"
#include "ops/cuda_kernels.h"

namespace ember::cuda_attn {
namespace {

template <class T>
const T* in(const Tensor& t) {
  return static_cast<const T*>(t.raw_data());
}
template <class T>
T* out(const Tensor& t) {
  return static_cast<T*>(t.raw_data());
}

void forward(const Dims& dm, bool flash, const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& p,
             const Tensor& o, const Tensor& lse) {
  EMBER_DISPATCH_FLOAT(q.dtype(), "attention", [&] {
    using T = scalar_t;
    if (flash) flash_forward<T>(dm, in<T>(q), in<T>(k), in<T>(v), out<T>(o), out<T>(lse));
    else standard_forward<T>(dm, in<T>(q), in<T>(k), in<T>(v), out<T>(p), out<T>(o), out<T>(lse));
  });
}

void backward(const Dims& dm, bool flash, const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& o,
              const Tensor& aux, const Tensor& dout, const Tensor& ds, const Tensor& dq, const Tensor& dk,
              const Tensor& dv) {
  EMBER_DISPATCH_FLOAT(q.dtype(), "attention backward", [&] {
    using T = scalar_t;
    if (flash)
      flash_backward<T>(dm, in<T>(q), in<T>(k), in<T>(v), in<T>(o), in<T>(aux), in<T>(dout), out<T>(dq), out<T>(dk),
                        out<T>(dv));
    else
      standard_backward<T>(dm, in<T>(q), in<T>(k), in<T>(v), in<T>(o), in<T>(aux), in<T>(dout), out<T>(ds),
                           out<T>(dq), out<T>(dk), out<T>(dv));
  });
}

const bool registered = [] {
  cuda_kernels::attention_forward.set(&forward);
  cuda_kernels::attention_backward.set(&backward);
  return true;
}();

}  // namespace
}  // namespace ember::cuda_attn
