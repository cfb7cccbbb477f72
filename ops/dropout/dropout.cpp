// dropout: checks, one draw from the generator per call (the seed of a counter-based mask, see
// keep_mask.h), dispatch, and the rules. The mask is a constant, so VJP and JVP both multiply by it;
// it is the kernel's own mask when the kernel ran right below this trace, else rebuilt from the seed.
#include "ops/dropout/dropout.h"

#include "framework/autograd/trace.h"
#include "ops/dropout/cpu/dropout_kernels.h"
#include "ops/elementwise/elementwise.h"

namespace ember {

#ifdef EMBER_CUDA
namespace cuda {
// ops/dropout/cuda/dropout.cu; the same mask as the CPU for the same seed (dropout_keep).
Tensor dropout(const Tensor& x, double p, uint64_t seed, Tensor* mask);
}  // namespace cuda
#endif

namespace {

Tensor dropout_kernel(const Tensor& x, double p, uint64_t seed, Tensor* mask) {
#ifdef EMBER_CUDA
  if (x.device() == Device::CUDA) return cuda::dropout(x, p, seed, mask);
#endif
  check_cpu(x, "dropout");
  return cpu::dropout(x, p, seed, mask);
}

Tensor dropout_seeded(const Tensor& x, double p, uint64_t seed) {
  Tensor kernel_mask;
  auto mask_of = [&](const Tensor& v) {
    if (kernel_mask.defined()) return kernel_mask;
    Tensor m;
    dropout_kernel(ones_like(v.detach()), p, seed, &m);
    return m;
  };
  auto r = autograd::record(
      "dropout", {x},
      [&](const autograd::Args& a) {
        if (autograd::detail::top_trace(a) == 0 && autograd::grad_enabled())
          return dropout_kernel(a[0], p, seed, &kernel_mask);
        return dropout_seeded(a[0], p, seed);
      },
      [&](const Tensor&, const autograd::Args& a) -> autograd::VjpFn {
        return [m = mask_of(a[0])](const Tensor& g, int) { return g * m; };
      },
      [&](const autograd::Args& t, const Tensor&, const autograd::Args& a) { return t[0] * mask_of(a[0]); });
  return r ? *r : dropout_kernel(x, p, seed, nullptr);
}

}  // namespace

Tensor dropout(const Tensor& x, double p, bool training, Generator* gen) {
  EMBER_CHECK(x.defined(), "dropout: input is undefined");
  EMBER_CHECK(is_floating(x.dtype()), "dropout: expected a float32 or float64 input, got ", x.dtype(),
              to_string(x.shape()));
  EMBER_CHECK(p >= 0 && p < 1, "dropout: p must lie in [0, 1), got ", p);
  if (!training || p == 0) return x;
  uint64_t seed = (gen ? *gen : default_generator()).next_u64();
  return dropout_seeded(x, p, seed);
}

}  // namespace ember
