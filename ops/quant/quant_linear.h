// y = x W^T + b for a quantised W (ops/quant/quantized_matrix.h): the product that inference with
// int8 or bfloat16 weights runs. The kernels read W's int8/bf16 bytes where they lie (ops/quant/
// cpu/); no float32 copy of W is ever built. Inference only: a traced x (one that autograd would
// differentiate) is refused, since the quantised weights have no gradient.
#pragma once
#include "framework/core/tensor.h"
#include "ops/quant/quantized_matrix.h"

namespace ember::quant {

enum class QuantKernel {
  Auto,         // the best this CPU runs for the format and row count (chosen_kernel)
  Portable,     // scalar loops, any CPU
  Avx2FewRows,  // up to 3 rows at a time, W widened to float32 in registers (decode)
  Avx2IntDots,  // int8 only: x quantised per block of 32 too, integer dot products
  Avx2Tiles,    // W widened 16 columns at a time into an L2-resident panel, 6 x 16 outer products (prefill)
};
const char* kernel_name(QuantKernel k);
// Whether kernel k runs here for weights of format f (the AVX2 ones need AVX2, FMA and F16C).
bool kernel_available(QuantKernel k, WeightFormat f);
// What Auto runs for `rows` rows of x: up to 3 rows the AVX2 few-rows kernel (for int8, or the
// integer dots after set_int8_decode_kernel), the tiles beyond, the portable loops on a CPU
// without AVX2.
QuantKernel chosen_kernel(WeightFormat f, int64_t rows);
// The kernel Auto runs for int8 weights and up to 3 rows: Avx2FewRows (the default) or Avx2IntDots,
// for benchmarks that compare them (gpt2 bench --int8-decode). Process-wide; ember::Error for others.
void set_int8_decode_kernel(QuantKernel k);
QuantKernel int8_decode_kernel();

// x: float32 CPU (..., w.cols); bias: undefined or float32 (w.rows). Returns (..., w.rows).
// Threaded over output columns (framework/core/parallel.h).
Tensor quant_linear(const Tensor& x, const QuantizedMatrix& w, const Tensor& bias = Tensor(),
                    QuantKernel kernel = QuantKernel::Auto);

}  // namespace ember::quant
