// Top-k selection along the last dimension, the building block of contextual sparsity: for each
// row (one input's activations of one layer) keep the k units with the largest values (or the
// largest magnitudes) and drop the rest. CPU, float32 (topk_indices also takes CUDA tensors); the
// results are plain data, not recorded by autograd (selection is a discrete choice with no useful
// gradient).
#pragma once
#include <cstdint>
#include <vector>

#include "framework/core/tensor.h"

namespace ember::sparsity {

// How many units a fraction of n keeps: round(fraction * n), at least 1 and at most n.
int64_t k_for_fraction(double fraction, int64_t n);

// The indices of the k largest of v[0..n) (by |v| when by_magnitude), written to out[0..k) in
// ascending index order. Ties go to the lower index, so the choice is deterministic.
void topk_row(const float* v, int64_t n, int64_t k, bool by_magnitude, int64_t* out);

// x (..., n) float32 -> int64 (..., k): each row's top-k indices, ascending. CPU tensors use
// topk_row; CUDA tensors the select ops (ops/select: Thrust), with the same result and ties.
Tensor topk_indices(const Tensor& x, int64_t k, bool by_magnitude = false);
// The same result on any device, composed from the select ops (topk, then sort of the indices);
// topk_indices calls it for CUDA tensors. Also refuses NaN, as topk_row does.
Tensor topk_indices_by_select(const Tensor& x, int64_t k, bool by_magnitude = false);
// x (..., n) -> float32 (..., n): 1 at each row's top-k entries, 0 elsewhere.
Tensor topk_mask(const Tensor& x, int64_t k, bool by_magnitude = false);
// x with every entry outside its row's top k set to zero.
Tensor keep_topk(const Tensor& x, int64_t k, bool by_magnitude = false);

// float32 `shape` (..., n) with ones at `indices` (distinct, in [0, n)) in every row.
Tensor mask_from_indices(const Shape& shape, const std::vector<int64_t>& indices);
// float32 `shape` (..., n) with k ones per row at positions drawn uniformly without replacement.
Tensor random_mask(const Shape& shape, int64_t k, Generator& gen);

// Each row's kept units as index lists, from a 0/1 mask (..., n): the form the gathered MLP takes.
std::vector<std::vector<int32_t>> mask_to_sets(const Tensor& mask);

}  // namespace ember::sparsity
