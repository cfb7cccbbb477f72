#include "ops/quant/quantized_matrix.h"

#include <algorithm>
#include <cmath>

#include "framework/core/half.h"
#include "framework/core/parallel.h"

namespace ember::quant {

WeightFormat parse_format(const std::string& name) {
  if (name == "f32" || name == "float32") return WeightFormat::Float32;
  if (name == "bf16" || name == "bfloat16") return WeightFormat::BFloat16;
  if (name == "int8" || name == "q8") return WeightFormat::Int8Block32;
  throw Error(str("unknown weight format '", name, "': expected f32, bf16 or int8"));
}

const char* format_name(WeightFormat f) {
  switch (f) {
    case WeightFormat::Float32: return "f32";
    case WeightFormat::BFloat16: return "bf16";
    case WeightFormat::Int8Block32: return "int8";
  }
  return "?";
}

int64_t QuantizedMatrix::bytes() const {
  return int64_t(q.size()) + int64_t(scale.size() * 2) + int64_t(bf16.size() * 2);
}

float QuantizedMatrix::at(int64_t r, int64_t c) const {
  const size_t i = size_t(r * kpad + c);
  if (format == WeightFormat::BFloat16) return bf16_bits_to_float(bf16[i]);
  return float(q[i]) * fp16_bits_to_float(scale[size_t(r * blocks_per_row() + c / kBlock)]);
}

namespace {

// One row of int8 blocks: the scale is rounded to float16 first and the values are quantised
// with that rounded scale, so q * scale is the nearest the stored pair can come to w.
void quantize_row_int8(const float* w, int64_t stride, int64_t cols, int64_t kpad, int8_t* q, uint16_t* s) {
  for (int64_t b0 = 0; b0 < kpad; b0 += kBlock) {
    const int64_t b1 = std::min(cols, b0 + kBlock);
    float amax = 0.0f;
    for (int64_t c = b0; c < b1; ++c) amax = std::max(amax, std::fabs(w[c * stride]));
    const uint16_t h = float_to_fp16_bits(amax / 127.0f);  // finite: quantize() checked max|w|
    const float scale = fp16_bits_to_float(h);
    *s++ = h;
    const float inv = scale > 0.0f ? 1.0f / scale : 0.0f;
    for (int64_t c = b0; c < b0 + kBlock; ++c) {
      float v = c < b1 ? std::nearbyint(w[c * stride] * inv) : 0.0f;
      q[c] = int8_t(std::max(-127.0f, std::min(127.0f, v)));
    }
  }
}

}  // namespace

QuantizedMatrix quantize(const Tensor& w, WeightFormat format, bool transposed) {
  EMBER_CHECK(format != WeightFormat::Float32, "quantize: f32 is the unquantised format; expected bf16 or int8");
  EMBER_CHECK(w.defined() && w.dim() == 2, "quantize: expected a 2-d weight, got ",
              w.defined() ? to_string(w.shape()) : "an undefined tensor");
  EMBER_CHECK(w.dtype() == DType::Float32 && w.device() == Device::CPU, "quantize: expected a float32 CPU weight, got ",
              w.dtype(), " on ", w.device());
  EMBER_CHECK(w.numel() > 0, "quantize: the weight ", to_string(w.shape()), " is empty");
  Tensor c = w.detach().contiguous();
  const float* src = c.data<float>();
  float amax = 0.0f;
  for (int64_t i = 0; i < c.numel(); ++i) {
    EMBER_CHECK(std::isfinite(src[i]), "quantize: the weight holds a non-finite value (", src[i], ") at flat index ", i);
    amax = std::max(amax, std::fabs(src[i]));
  }
  // Checked here, not per block inside the parallel loop below (an exception cannot leave it).
  EMBER_CHECK(format != WeightFormat::Int8Block32 || std::isfinite(fp16_bits_to_float(float_to_fp16_bits(amax / 127.0f))),
              "quantize: the largest magnitude ", amax, " needs an int8 block scale past float16's range (|w| <= 65504 * 127)");
  QuantizedMatrix m;
  m.format = format;
  // W (rows = out, cols = in): element (r, k) at src[r * rstride + k * kstride].
  m.rows = transposed ? c.size(1) : c.size(0);
  m.cols = transposed ? c.size(0) : c.size(1);
  const int64_t rstride = transposed ? 1 : m.cols, kstride = transposed ? m.rows : 1;
  m.kpad = (m.cols + kBlock - 1) / kBlock * kBlock;
  if (format == WeightFormat::Int8Block32) {
    m.q.assign(size_t(m.rows * m.kpad), 0);
    m.scale.assign(size_t(m.rows * m.blocks_per_row()), 0);
  } else {
    m.bf16.assign(size_t(m.rows * m.kpad), 0);
  }
  // Large matrices (the LM head is 50257 x 768) are quantised in parallel, one row per task.
  parallel_for(m.rows, 64, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const float* row = src + r * rstride;
      if (format == WeightFormat::Int8Block32) {
        quantize_row_int8(row, kstride, m.cols, m.kpad, m.q.data() + r * m.kpad,
                          m.scale.data() + r * m.blocks_per_row());
      } else {
        uint16_t* out = m.bf16.data() + r * m.kpad;
        for (int64_t k = 0; k < m.cols; ++k) out[k] = float_to_bf16_bits(row[k * kstride]);
      }
    }
  });
  return m;
}

Tensor dequantize(const QuantizedMatrix& m) {
  EMBER_CHECK(m.rows > 0 && m.cols > 0, "dequantize: empty quantised matrix");
  Tensor out = empty({m.rows, m.cols});
  float* o = out.data<float>();
  for (int64_t r = 0; r < m.rows; ++r)
    for (int64_t c = 0; c < m.cols; ++c) o[r * m.cols + c] = m.at(r, c);
  return out;
}

}  // namespace ember::quant
