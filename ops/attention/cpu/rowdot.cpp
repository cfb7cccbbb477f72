// D = rowsum(dO * O), the per-row term every attention backward subtracts from dP.
#include "framework/core/parallel.h"
#include "ops/attention/cpu/kernels.h"

namespace ember::cpu::attn {

template <class T>
void rowdot(int64_t rows, int64_t d, const T* dout, const T* o, T* out) {
  parallel_for(rows, 256, [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) {
      T acc = 0;
      for (int64_t c = 0; c < d; ++c) acc += dout[r * d + c] * o[r * d + c];
      out[r] = acc;
    }
  });
}

template void rowdot<float>(int64_t, int64_t, const float*, const float*, float*);
template void rowdot<double>(int64_t, int64_t, const double*, const double*, double*);

}  // namespace ember::cpu::attn
