// Weight-only quantised matrices for inference: a (rows x cols) float32 weight W, stored as
//   Int8Block32: int8 values in blocks of 32 along a row, one float16 scale per block
//                (scale = max|w| / 127 over the block, q = round(w / scale) in [-127, 127]);
//                1.0625 bytes per weight, the idea of llama.cpp's Q8_0;
//   BFloat16:    each weight rounded to bfloat16 (to nearest even); 2 bytes per weight.
// Rows are the output features, cols the input features (PyTorch's Linear layout), so a product
// y = x W^T reads each row once, front to back.
//
// Tail rule: every row is stored padded to a whole number of blocks, kpad = round_up(cols, 32),
// with zero weights past `cols` (int8: q = 0; bf16: +0). A product pads its activation rows the
// same way, so the kernels never see a partial block and the padding adds exactly zero.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "framework/core/tensor.h"

namespace ember::quant {

enum class WeightFormat { Float32, BFloat16, Int8Block32 };

constexpr int64_t kBlock = 32;  // int8 values per scale; also the padding unit of every row

// "f32", "bf16", "int8" (the CLI's and Python's names); ember::Error listing them otherwise.
WeightFormat parse_format(const std::string& name);
const char* format_name(WeightFormat f);

struct QuantizedMatrix {
  WeightFormat format = WeightFormat::Int8Block32;
  int64_t rows = 0, cols = 0;
  int64_t kpad = 0;             // cols rounded up to a multiple of kBlock: the stored row length
  std::vector<int8_t> q;        // Int8Block32: rows x kpad values
  std::vector<uint16_t> scale;  // Int8Block32: rows x (kpad / kBlock) float16 bit patterns
  std::vector<uint16_t> bf16;   // BFloat16: rows x kpad bit patterns

  int64_t blocks_per_row() const { return kpad / kBlock; }
  // The bytes a product reads: values and scales (what decode streams from memory per call).
  int64_t bytes() const;
  // W's value at (r, c) as the kernels see it: q * float(scale), or the bfloat16 widened.
  float at(int64_t r, int64_t c) const;
};

// Quantises a 2-d float32 CPU weight (rows, cols) = (out, in). `transposed` takes W stored
// (in, out) instead, as GPT-2's Conv1D keeps it, and quantises its transpose. ember::Error for a
// format other than BFloat16/Int8Block32, an empty or non-2-d or non-float32 weight, or a
// non-finite value (int8 also: a block whose scale overflows float16, |w| > 65504 * 127).
QuantizedMatrix quantize(const Tensor& w, WeightFormat format, bool transposed = false);

// The float32 (rows, cols) matrix that the kernels multiply by: for tests and references only;
// products never build it.
Tensor dequantize(const QuantizedMatrix& m);

}  // namespace ember::quant
