#include "models/sparsity/topk.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>

#include "framework/core/parallel.h"
#include "ops/elementwise/elementwise.h"
#include "ops/reduce/reduce.h"
#include "ops/select/select.h"

namespace ember::sparsity {

namespace {

// Rows of a float32 CPU tensor: (rows, n) as a contiguous copy when needed.
Tensor as_rows(const Tensor& x, const char* op, int64_t* rows, int64_t* n) {
  EMBER_CHECK(x.defined() && x.dim() >= 1, op, ": expected a tensor of shape (..., n), got ",
              x.defined() ? to_string(x.shape()) : "an undefined tensor");
  EMBER_CHECK(x.dtype() == DType::Float32, op, ": expected float32, got ", x.dtype());
  check_cpu(x, op);
  *n = x.size(-1);
  *rows = *n ? x.numel() / *n : 0;
  return x.detach().contiguous();
}

void check_k(const char* op, int64_t k, int64_t n) {
  EMBER_CHECK(k >= 0 && k <= n, op, ": k = ", k, " is outside [0, ", n, "]");
}

}  // namespace

int64_t k_for_fraction(double fraction, int64_t n) {
  EMBER_CHECK(fraction > 0 && fraction <= 1, "k_for_fraction: fraction ", fraction, " is outside (0, 1]");
  EMBER_CHECK(n > 0, "k_for_fraction: n must be positive, got ", n);
  return std::clamp<int64_t>(int64_t(std::llround(fraction * double(n))), 1, n);
}

namespace {

// An unsigned key with the float order: flipping the sign bit of positives and every bit of
// negatives makes larger floats larger integers (-0 is first made +0, so they tie as floats do).
inline uint32_t order_key(float f, bool by_magnitude) {
  uint32_t u;
  if (f == 0.0f) f = 0.0f;
  std::memcpy(&u, &f, sizeof u);
  if (by_magnitude) return u & 0x7fffffffu;
  return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}

}  // namespace

void topk_row(const float* v, int64_t n, int64_t k, bool by_magnitude, int64_t* out) {
  check_k("topk_row", k, n);
  if (k == 0) return;
  // Radix selection of the k-th largest key, one byte at a time from the top: a histogram of the
  // candidates' next byte finds the byte of the k-th key, and only candidates sharing the bytes
  // found so far stay. Four passes over shrinking candidate lists and no comparison-based
  // partitioning, whose branches a predictor can only learn when the same row comes back.
  thread_local std::vector<uint32_t> keys;
  thread_local std::vector<int32_t> cand, next;
  keys.resize(size_t(n));
  cand.resize(size_t(n));
  for (int64_t i = 0; i < n; ++i) {
    EMBER_CHECK(!std::isnan(v[i]), "topk: entry ", i, " of a row of ", n, " is NaN; top-k needs comparable values");
    keys[size_t(i)] = order_key(v[i], by_magnitude);
    cand[size_t(i)] = int32_t(i);
  }
  int64_t remaining = k;  // how many of the keys equal to the threshold prefix still to take
  uint32_t prefix = 0;
  for (int shift = 24; shift >= 0; shift -= 8) {
    int64_t hist[256] = {0};
    for (int32_t i : cand) hist[(keys[size_t(i)] >> shift) & 255u]++;
    int b = 255;
    for (; b > 0; --b) {
      if (hist[b] >= remaining) break;
      remaining -= hist[b];
    }
    prefix |= uint32_t(b) << shift;
    // Branch-free compaction: every candidate is written, the count advances only on a match
    // (whether a key matches is close to a coin flip in the first passes).
    next.resize(cand.size());
    size_t kept = 0;
    for (int32_t i : cand) {
      next[kept] = i;
      kept += ((keys[size_t(i)] >> shift) & 255u) == uint32_t(b);
    }
    next.resize(kept);
    cand.swap(next);
  }
  // prefix is now the k-th largest key: take every larger key and the first `remaining` equal
  // ones (the lower indices win ties), scanning in index order so the output is ascending.
  int64_t o = 0;
  for (int64_t i = 0; i < n && o < k; ++i) {  // o < k here, so out[o] is in bounds
    uint32_t key = keys[size_t(i)];
    bool tie = key == prefix, take = (key > prefix) | (tie & (remaining > 0));
    remaining -= int64_t(tie & take);
    out[o] = i;
    o += take;
  }
}

// The k largest by ops/select's order, which breaks ties by the lower index exactly as topk_row
// does, then those indices sorted ascending (as float64, exact for any index below 2^53).
Tensor topk_indices_by_select(const Tensor& x, int64_t k, bool by_magnitude) {
  const char* op = "topk_indices";
  EMBER_CHECK(x.defined() && x.dim() >= 1, op, ": expected a tensor of shape (..., n), got ",
              x.defined() ? to_string(x.shape()) : "an undefined tensor");
  EMBER_CHECK(x.dtype() == DType::Float32, op, ": expected float32, got ", x.dtype());
  check_k(op, k, x.size(-1));
  Tensor v = x.detach();
  // NaN has no rank in topk_row's contract: refuse it on every device (one reduction here).
  int64_t comparable = int64_t(v.eq(v).sum().to(Device::CPU).item());  // NaN != NaN
  EMBER_CHECK(comparable == v.numel(), op, ": ", v.numel() - comparable, " entries of the ", to_string(v.shape()),
              " input are NaN; top-k needs comparable values");
  if (by_magnitude) v = abs(v);
  Tensor chosen = topk(v, k, /*largest=*/true).indices;
  return sort(chosen.to(DType::Float64)).values.to(DType::Int64);
}

Tensor topk_indices(const Tensor& x, int64_t k, bool by_magnitude) {
  if (x.defined() && x.device() != Device::CPU) return topk_indices_by_select(x, k, by_magnitude);
  int64_t rows, n;
  Tensor c = as_rows(x, "topk_indices", &rows, &n);
  check_k("topk_indices", k, n);
  Shape shape = x.shape();
  shape.back() = k;
  Tensor out = empty(shape, DType::Int64);
  const float* src = c.data<float>();
  int64_t* dst = out.data<int64_t>();
  parallel_for(rows, 16, [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) topk_row(src + r * n, n, k, by_magnitude, dst + r * k);
  });
  return out;
}

Tensor topk_mask(const Tensor& x, int64_t k, bool by_magnitude) {
  int64_t rows, n;
  Tensor c = as_rows(x, "topk_mask", &rows, &n);
  check_k("topk_mask", k, n);
  Tensor out = zeros(x.shape(), DType::Float32);
  const float* src = c.data<float>();
  float* dst = out.data<float>();
  parallel_for(rows, 16, [&](int64_t b, int64_t e) {
    std::vector<int64_t> idx(static_cast<size_t>(k));
    for (int64_t r = b; r < e; ++r) {
      topk_row(src + r * n, n, k, by_magnitude, idx.data());
      for (int64_t i : idx) dst[r * n + i] = 1.0f;
    }
  });
  return out;
}

Tensor keep_topk(const Tensor& x, int64_t k, bool by_magnitude) {
  Tensor m = topk_mask(x, k, by_magnitude);
  Tensor c = x.detach().contiguous().clone();
  float* p = c.data<float>();
  const float* mp = m.data<float>();
  for (int64_t i = 0; i < c.numel(); ++i) p[i] *= mp[i];
  return c;
}

Tensor mask_from_indices(const Shape& shape, const std::vector<int64_t>& indices) {
  EMBER_CHECK(!shape.empty() && shape.back() > 0, "mask_from_indices: shape ", to_string(shape),
              " must be (..., n) with n > 0");
  int64_t n = shape.back();
  std::vector<char> seen(size_t(n), 0);
  for (int64_t i : indices) {
    EMBER_CHECK(i >= 0 && i < n, "mask_from_indices: index ", i, " is outside [0, ", n, ")");
    EMBER_CHECK(!seen[size_t(i)], "mask_from_indices: index ", i, " appears twice");
    seen[size_t(i)] = 1;
  }
  Tensor out = zeros(shape, DType::Float32);
  float* p = out.data<float>();
  int64_t rows = out.numel() / n;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t i : indices) p[r * n + i] = 1.0f;
  return out;
}

Tensor random_mask(const Shape& shape, int64_t k, Generator& gen) {
  EMBER_CHECK(!shape.empty() && shape.back() > 0, "random_mask: shape ", to_string(shape), " must be (..., n) with n > 0");
  int64_t n = shape.back();
  check_k("random_mask", k, n);
  Tensor out = zeros(shape, DType::Float32);
  float* p = out.data<float>();
  int64_t rows = out.numel() / n;
  std::vector<int64_t> idx(static_cast<size_t>(n));
  for (int64_t r = 0; r < rows; ++r) {
    std::iota(idx.begin(), idx.end(), int64_t(0));
    // A partial Fisher-Yates shuffle: the first k positions are a uniform k-subset.
    for (int64_t i = 0; i < k; ++i) {
      int64_t j = i + int64_t(gen.next_u64() % uint64_t(n - i));
      std::swap(idx[size_t(i)], idx[size_t(j)]);
      p[r * n + idx[size_t(i)]] = 1.0f;
    }
  }
  return out;
}

std::vector<std::vector<int32_t>> mask_to_sets(const Tensor& mask) {
  int64_t rows, n;
  Tensor c = as_rows(mask, "mask_to_sets", &rows, &n);
  const float* p = c.data<float>();
  std::vector<std::vector<int32_t>> sets(static_cast<size_t>(rows));
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t i = 0; i < n; ++i)
      if (p[r * n + i] != 0.0f) sets[size_t(r)].push_back(int32_t(i));
  return sets;
}

}  // namespace ember::sparsity
