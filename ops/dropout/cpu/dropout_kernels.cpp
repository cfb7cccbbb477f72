#include "ops/dropout/cpu/dropout_kernels.h"

#include "framework/core/parallel.h"
#include "ops/dropout/keep_mask.h"

namespace ember::cpu {

Tensor dropout(const Tensor& x_in, double p, uint64_t seed, Tensor* mask) {
  Tensor x = x_in.contiguous();
  Tensor out = empty(x.shape(), x.dtype());
  if (mask) *mask = empty(x.shape(), x.dtype());
  EMBER_DISPATCH_FLOAT(x.dtype(), "dropout", [&] {
    const scalar_t* in = x.data<scalar_t>();
    scalar_t* o = out.data<scalar_t>();
    scalar_t* m = mask ? mask->data<scalar_t>() : nullptr;
    const scalar_t scale = scalar_t(1.0 / (1.0 - p));
    parallel_for(x.numel(), 1 << 14, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        scalar_t k = dropout_keep(seed, uint64_t(i), p) ? scale : scalar_t(0);
        o[i] = in[i] * k;
        if (m) m[i] = k;
      }
    });
  });
  return out;
}

}  // namespace ember::cpu
