// Statistics of activations that the sparsity study needs beside top-k: per-unit means over a
// data set (static sparsity keeps the units with the largest mean for every input) and how many
// units carry a given part of one input's activation norm.
#pragma once
#include <cstdint>
#include <vector>

#include "framework/core/tensor.h"

namespace ember::sparsity {

// Running per-unit mean of activations (or of their magnitudes) over all rows seen.
class ActivationMeans {
 public:
  explicit ActivationMeans(int64_t units, bool magnitude = false);
  void add(const Tensor& acts);  // float32 (..., units); every row counts once
  int64_t units() const { return int64_t(sum_.size()); }
  int64_t rows() const { return rows_; }
  std::vector<double> means() const;
  // The k units with the largest mean, ascending (ties to the lower index): the static selection.
  std::vector<int64_t> top(int64_t k) const;

 private:
  std::vector<double> sum_;
  int64_t rows_ = 0;
  bool magnitude_;
};

// The fewest units of v[0..n) whose sub-vector has an L2 norm of at least `fraction` of the
// whole vector's: the largest |v_i| first, until sum v_i^2 >= fraction^2 * ||v||^2. 0 for v = 0.
int64_t units_for_norm_fraction(const float* v, int64_t n, double fraction);
// For each fraction, that count for every row of x (..., n): result[f][row].
std::vector<std::vector<int64_t>> norm_coverage(const Tensor& x, const std::vector<double>& fractions);

// Of the units an oracle keeps, the fraction that a prediction also keeps: sum(pred * oracle) /
// sum(oracle), over all rows of two 0/1 masks of the same shape (1 when the oracle keeps none).
double set_recall(const Tensor& predicted_mask, const Tensor& oracle_mask);

}  // namespace ember::sparsity
