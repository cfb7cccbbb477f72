// The CPU kernels of y = x W^T + b for a quantised W (ops/quant/quantized_matrix.h). Each computes
// the output columns [n0, n1) of every row of x, so the caller threads them over columns.
#pragma once
#include <cstdint>

#include "ops/quant/quantized_matrix.h"

namespace ember::quant::cpu {

struct Product {
  const float* x = nullptr;  // m rows of w->kpad floats (zero past w->cols), row stride w->kpad
  int64_t m = 0;
  const QuantizedMatrix* w = nullptr;
  const float* bias = nullptr;  // w->rows values, or null
  float* y = nullptr;           // y[i * ldy + j]
  int64_t ldy = 0;
  // The int8 integer-dot kernel only: x quantised per block of 32 (m rows of kpad int8 values,
  // and m rows of kpad / 32 float scales); quantize_activations fills them.
  const int8_t* xq = nullptr;
  const float* xs = nullptr;
};

// Scalar code for any CPU, format and row count: float32 accumulation of x * w.at(j, k).
void product_portable(const Product& p, int64_t n0, int64_t n1);

#if defined(__x86_64__) || defined(__i386__)
// Whether this CPU (and OS) runs the AVX2 kernels below: AVX2, FMA and F16C (the float16 scales).
bool has_avx2_f16c();
// Up to 3 rows of x at a time, streaming each row of W once per group of rows and widening its
// int8 or bf16 values to float32 in registers (int8: times the block's scale) before the FMAs.
// Several rows of W are streamed at once, far apart (ember::cpu::gemv_streams() of them for one row
// of x, four for two or three), so that several memory streams are in flight.
void product_few_rows_avx2(const Product& p, int64_t n0, int64_t n1);
// Int8 only: integer dot products of W's int8 blocks with x's int8 blocks (maddubs/madd), scaled
// by both blocks' scales into float32 accumulators. Needs p.xq and p.xs.
void product_int_dots_avx2(const Product& p, int64_t n0, int64_t n1);
// Many rows: W is widened 16 columns at a time into a k-major float32 panel that stays in the L2
// (never the whole matrix), then a 6 x 16 outer-product kernel multiplies every row of x by it.
void product_tiles_avx2(const Product& p, int64_t n0, int64_t n1);
#endif

// x (m rows of kpad floats) to int8 blocks: per block of 32, scale = max|x| / 127 (float32) and
// q = round(x / scale). The activations' side of the integer-dot kernel.
void quantize_activations(const float* x, int64_t m, int64_t kpad, int8_t* xq, float* xs);

}  // namespace ember::quant::cpu
