// Rearranging and padding, written with the shape primitives, index_select and where (so all are
// differentiable, to any order), and the constructors eye and linspace.
#pragma once
#include <cstdint>
#include <vector>

#include "framework/core/tensor.h"

namespace ember {

// x with the order of elements reversed along each of dims.
Tensor flip(const Tensor& x, const Shape& dims);
// Elements shifted by shift along dim, wrapping around (negative shifts go the other way).
Tensor roll(const Tensor& x, int64_t shift, int64_t dim);
// Tiles x repeats[i] times along dim i (PyTorch's Tensor.repeat); extra leading repeats add dims.
Tensor repeat(const Tensor& x, const Shape& repeats);
// The lower (tril) or upper (triu) triangle of the last two dims, zero elsewhere; diagonal k > 0
// moves the edge up (above the main diagonal), k < 0 down.
Tensor tril(const Tensor& x, int64_t diagonal = 0);
Tensor triu(const Tensor& x, int64_t diagonal = 0);

enum class PadMode { Constant, Reflect };
// pads = {before, after} for the last dim, then the one before it, ... (PyTorch's F.pad order);
// each >= 0. Reflect mirrors without repeating the edge, so each pad must be below the dim's size.
Tensor pad(const Tensor& x, const std::vector<int64_t>& pads, PadMode mode = PadMode::Constant, double value = 0.0);

// The n x m identity (m = -1: square).
Tensor eye(int64_t n, int64_t m = -1, DType dtype = DType::Float32);
// steps values from start to end inclusive, evenly spaced.
Tensor linspace(double start, double end, int64_t steps, DType dtype = DType::Float32);

}  // namespace ember
