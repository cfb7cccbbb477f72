#include "ops/quant/quant_linear.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <vector>

#include "framework/core/parallel.h"
#include "ops/quant/cpu/kernels.h"

namespace ember::quant {

const char* kernel_name(QuantKernel k) {
  switch (k) {
    case QuantKernel::Auto: return "auto";
    case QuantKernel::Portable: return "portable";
    case QuantKernel::Avx2FewRows: return "avx2_few_rows";
    case QuantKernel::Avx2IntDots: return "avx2_int_dots";
    case QuantKernel::Avx2Tiles: return "avx2_tiles";
  }
  return "?";
}

bool kernel_available(QuantKernel k, WeightFormat f) {
  if (f == WeightFormat::Float32) return false;
  if (k == QuantKernel::Auto || k == QuantKernel::Portable) return true;
#if defined(__x86_64__) || defined(__i386__)
  if (!cpu::has_avx2_f16c()) return false;
  return k != QuantKernel::Avx2IntDots || f == WeightFormat::Int8Block32;
#else
  return false;
#endif
}

namespace {
// The integer dots by default: half the instructions per weight of widening, and with streams
// they read W faster in bench_quant_kernels (examples/gpt2/WEIGHTS.md); they round x per block of
// 32, which moved no perplexity and a few greedy tokens there.
std::atomic<int> g_int8_decode{int(QuantKernel::Avx2IntDots)};
}

void set_int8_decode_kernel(QuantKernel k) {
  EMBER_CHECK(k == QuantKernel::Avx2FewRows || k == QuantKernel::Avx2IntDots,
              "set_int8_decode_kernel: expected avx2_few_rows or avx2_int_dots, got ", kernel_name(k));
  g_int8_decode = int(k);
}
QuantKernel int8_decode_kernel() { return QuantKernel(g_int8_decode.load()); }

QuantKernel chosen_kernel(WeightFormat f, int64_t rows) {
  if (!kernel_available(QuantKernel::Avx2FewRows, f)) return QuantKernel::Portable;
  if (rows > 3) return QuantKernel::Avx2Tiles;
  return f == WeightFormat::Int8Block32 ? int8_decode_kernel() : QuantKernel::Avx2FewRows;
}

Tensor quant_linear(const Tensor& x, const QuantizedMatrix& w, const Tensor& bias, QuantKernel kernel) {
  EMBER_CHECK(w.format != WeightFormat::Float32 && w.rows > 0 && w.cols > 0 && w.kpad % kBlock == 0,
              "quant_linear: the weight is not a quantised matrix (use quantize())");
  EMBER_CHECK(x.defined() && x.dim() >= 1 && x.size(-1) == w.cols, "quant_linear: input of shape ",
              x.defined() ? to_string(x.shape()) : "undefined", " does not end in the weight's ", w.cols, " inputs");
  EMBER_CHECK(x.dtype() == DType::Float32 && x.device() == Device::CPU, "quant_linear: expected a float32 CPU input, got ",
              x.dtype(), " on ", x.device());
  EMBER_CHECK(!x.is_traced(), "quant_linear: ", format_name(w.format),
              " weights are for inference and have no gradient, but the input is being differentiated; run under "
              "no_grad (C++: autograd::NoGradGuard; Python: with ember.no_grad()) or train in float32 and quantise after");
  if (bias.defined())
    EMBER_CHECK(bias.dim() == 1 && bias.size(0) == w.rows && bias.dtype() == DType::Float32 &&
                    bias.device() == Device::CPU && !bias.is_traced(),
                "quant_linear: bias must be an untraced float32 CPU vector of ", w.rows, " values, got ", bias.dtype(),
                " ", to_string(bias.shape()));
  EMBER_CHECK(kernel_available(kernel, w.format), "quant_linear: kernel ", kernel_name(kernel),
              " does not run here for ", format_name(w.format), " weights");
  const int64_t m = x.numel() / w.cols;
  if (kernel == QuantKernel::Auto) kernel = chosen_kernel(w.format, m);
  Shape out_shape = x.shape();
  out_shape.back() = w.rows;
  Tensor y = empty(out_shape);
  if (m == 0) return y;
  // x's rows padded to kpad with zeros (the weights' tail rule), contiguous.
  Tensor xc = x.contiguous();
  std::vector<float> xpad(size_t(m * w.kpad), 0.0f);
  const float* xs = xc.data<float>();
  for (int64_t i = 0; i < m; ++i) std::memcpy(&xpad[size_t(i * w.kpad)], xs + i * w.cols, size_t(w.cols) * 4);
  Tensor bc = bias.defined() ? bias.contiguous() : Tensor();
  cpu::Product p;
  p.x = xpad.data();
  p.m = m;
  p.w = &w;
  p.bias = bc.defined() ? bc.data<float>() : nullptr;
  p.y = y.data<float>();
  p.ldy = w.rows;
  std::vector<int8_t> xq;
  std::vector<float> xscale;
  if (kernel == QuantKernel::Avx2IntDots) {
    xq.resize(xpad.size());
    xscale.resize(size_t(m * w.blocks_per_row()));
    cpu::quantize_activations(p.x, m, w.kpad, xq.data(), xscale.data());
    p.xq = xq.data();
    p.xs = xscale.data();
  }
  // Each thread takes a run of output columns; a run worth a thread streams at least ~64 KiB of W.
  const int64_t col_bytes = std::max<int64_t>(1, w.bytes() / w.rows);
  const int64_t grain = std::max<int64_t>(1, (int64_t(64) << 10) / col_bytes);
  parallel_for(w.rows, grain, [&](int64_t n0, int64_t n1) {
    switch (kernel) {
#if defined(__x86_64__) || defined(__i386__)
      case QuantKernel::Avx2FewRows: return cpu::product_few_rows_avx2(p, n0, n1);
      case QuantKernel::Avx2IntDots: return cpu::product_int_dots_avx2(p, n0, n1);
      case QuantKernel::Avx2Tiles: return cpu::product_tiles_avx2(p, n0, n1);
#endif
      default: return cpu::product_portable(p, n0, n1);
    }
  });
  return y;
}

}  // namespace ember::quant
