#include "models/sparsity/statistics.h"

#include <algorithm>
#include <cmath>

#include "models/sparsity/topk.h"

namespace ember::sparsity {

namespace {
Tensor float_rows(const Tensor& x, const char* op) {
  EMBER_CHECK(x.defined() && x.dim() >= 1 && x.dtype() == DType::Float32, op,
              ": expected a float32 tensor of shape (..., n), got ",
              x.defined() ? str(x.dtype(), to_string(x.shape())) : "an undefined tensor");
  check_cpu(x, op);
  return x.detach().contiguous();
}
}  // namespace

ActivationMeans::ActivationMeans(int64_t units, bool magnitude) : sum_(size_t(std::max<int64_t>(units, 0)), 0.0), magnitude_(magnitude) {
  EMBER_CHECK(units > 0, "ActivationMeans: units must be positive, got ", units);
}

void ActivationMeans::add(const Tensor& acts) {
  Tensor c = float_rows(acts, "ActivationMeans::add");
  int64_t n = units();
  EMBER_CHECK(c.size(-1) == n, "ActivationMeans::add: rows of ", c.size(-1), " units, expected ", n);
  const float* p = c.data<float>();
  int64_t rows = c.numel() / n;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t i = 0; i < n; ++i) sum_[size_t(i)] += magnitude_ ? std::fabs(p[r * n + i]) : p[r * n + i];
  rows_ += rows;
}

std::vector<double> ActivationMeans::means() const {
  std::vector<double> m(sum_.size(), 0.0);
  for (size_t i = 0; i < m.size(); ++i) m[i] = rows_ ? sum_[i] / double(rows_) : 0.0;
  return m;
}

std::vector<int64_t> ActivationMeans::top(int64_t k) const {
  EMBER_CHECK(rows_ > 0, "ActivationMeans::top: no activations were added");
  std::vector<double> m = means();
  std::vector<float> mf(m.begin(), m.end());
  std::vector<int64_t> idx(size_t(std::max<int64_t>(k, 0)));
  topk_row(mf.data(), units(), k, false, idx.data());
  return idx;
}

int64_t units_for_norm_fraction(const float* v, int64_t n, double fraction) {
  EMBER_CHECK(fraction >= 0 && fraction <= 1, "units_for_norm_fraction: fraction ", fraction, " is outside [0, 1]");
  std::vector<double> sq(static_cast<size_t>(n));
  double total = 0;
  for (int64_t i = 0; i < n; ++i) total += sq[size_t(i)] = double(v[i]) * double(v[i]);
  if (total == 0) return 0;
  std::sort(sq.begin(), sq.end(), std::greater<double>());
  // A relative slack so that fraction = 1 is reached despite rounding in the running sum.
  double target = fraction * fraction * total * (1 - 1e-12);
  double acc = 0;
  for (int64_t i = 0; i < n; ++i) {
    acc += sq[size_t(i)];
    if (acc >= target) return i + 1;
  }
  return n;
}

std::vector<std::vector<int64_t>> norm_coverage(const Tensor& x, const std::vector<double>& fractions) {
  Tensor c = float_rows(x, "norm_coverage");
  int64_t n = c.size(-1), rows = n ? c.numel() / n : 0;
  const float* p = c.data<float>();
  std::vector<std::vector<int64_t>> out(fractions.size(), std::vector<int64_t>(size_t(rows)));
  for (size_t f = 0; f < fractions.size(); ++f)
    for (int64_t r = 0; r < rows; ++r) out[f][size_t(r)] = units_for_norm_fraction(p + r * n, n, fractions[f]);
  return out;
}

double set_recall(const Tensor& predicted_mask, const Tensor& oracle_mask) {
  Tensor a = float_rows(predicted_mask, "set_recall"), b = float_rows(oracle_mask, "set_recall");
  EMBER_CHECK(a.shape() == b.shape(), "set_recall: predicted mask ", to_string(a.shape()), " and oracle mask ",
              to_string(b.shape()), " must have the same shape");
  const float* pa = a.data<float>();
  const float* pb = b.data<float>();
  double hit = 0, total = 0;
  for (int64_t i = 0; i < a.numel(); ++i) {
    EMBER_CHECK((pa[i] == 0 || pa[i] == 1) && (pb[i] == 0 || pb[i] == 1), "set_recall: masks must hold only 0 and 1");
    total += pb[i];
    hit += pa[i] * pb[i];
  }
  return total > 0 ? hit / total : 1.0;
}

}  // namespace ember::sparsity
