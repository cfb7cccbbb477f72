#include "framework/train/optim/clip_grad.h"

#include <algorithm>
#include <cmath>

#include "framework/core/autograd/trace.h"
#include "framework/core/parallel.h"
#include "ops/elementwise/elementwise.h"
#include "ops/reduce/reduce.h"

namespace ember::optim {

namespace {
// The TensorImpl of the eager-trace leaf under `p`, where backward() stores the gradient.
TensorImpl* leaf_impl(const Tensor& p) {
  for (TensorImpl* q = p.impl(); q && q->node; q = q->inner.get())
    if (q->trace == autograd::kEagerTrace) return q;
  return nullptr;
}
}  // namespace

namespace {
// One contiguous CPU float32 or float64 gradient's elements.
struct Span {
  const void* data;
  int64_t n;
  bool f32;
};

template <class T>
double sum_squares(const T* x, int64_t n) {
  double acc[4] = {0, 0, 0, 0};  // four chains: the adds need not wait on one another
  int64_t i = 0;
  for (; i + 4 <= n; i += 4)
    for (int j = 0; j < 4; ++j) acc[j] += double(x[i + j]) * double(x[i + j]);
  for (; i < n; ++i) acc[0] += double(x[i]) * double(x[i]);
  return (acc[0] + acc[1]) + (acc[2] + acc[3]);
}

// The squares of the elements [b, e) of the spans laid end to end, in float64.
double sum_squares(const std::vector<Span>& spans, int64_t b, int64_t e) {
  double total = 0;
  int64_t base = 0;
  for (const Span& s : spans) {
    const int64_t lo = std::max(b, base), hi = std::min(e, base + s.n);
    if (lo < hi)
      total += s.f32 ? sum_squares(static_cast<const float*>(s.data) + (lo - base), hi - lo)
                     : sum_squares(static_cast<const double*>(s.data) + (lo - base), hi - lo);
    base += s.n;
  }
  return total;
}

// Ranges this long pay for a second thread (a few microseconds of work).
constexpr int64_t kNormGrain = int64_t(1) << 16;
}  // namespace

// One pass over all CPU gradients together, in one parallel region: the per-tensor ops (two casts,
// a product, a sum and a read-back for each of a model's tensors) were a hundred small regions a
// step. Other gradients (CUDA, other dtypes) take the ops.
double grad_norm(const std::vector<Tensor>& params) {
  autograd::NoGradGuard no_grad;
  double total = 0;
  std::vector<Span> spans;
  std::vector<Tensor> keep;  // contiguous copies of strided gradients, alive while spans point at them
  int64_t elements = 0;
  for (const Tensor& p : params) {
    Tensor g = p.grad();
    if (!g.defined()) continue;
    g = g.detach();
    const bool f32 = g.dtype() == DType::Float32;
    if (g.device() == Device::CPU && (f32 || g.dtype() == DType::Float64)) {
      if (!g.is_contiguous()) g = g.contiguous();
      keep.push_back(g);
      spans.push_back({g.raw_data(), g.numel(), f32});
      elements += g.numel();
      continue;
    }
    total += sum(g.to(DType::Float64) * g.to(DType::Float64)).item();
  }
  if (elements == 0) return std::sqrt(total);
  const int nt = int(std::min<int64_t>(num_threads(), (elements + kNormGrain - 1) / kNormGrain));
  std::vector<double> partial(size_t(std::max(nt, 1)), 0.0);
  const int64_t chunk = (elements + int64_t(partial.size()) - 1) / int64_t(partial.size());
  parallel_for(int64_t(partial.size()), 1, [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) partial[size_t(t)] = sum_squares(spans, t * chunk, std::min(elements, (t + 1) * chunk));
  });
  for (double x : partial) total += x;  // in thread order: the same sum at the same thread count
  return std::sqrt(total);
}

double clip_grad_norm(const std::vector<Tensor>& params, double max_norm) {
  EMBER_CHECK(max_norm > 0, "clip_grad_norm: max_norm must be > 0, got ", max_norm);
  double norm = grad_norm(params);
  EMBER_CHECK(std::isfinite(norm), "clip_grad_norm: the gradient norm is not finite (", norm, ")");
  if (norm <= max_norm) return norm;
  double scale = max_norm / (norm + 1e-6);
  autograd::NoGradGuard no_grad;
  for (const Tensor& p : params) {
    TensorImpl* leaf = leaf_impl(p);
    if (!leaf || !leaf->grad) continue;
    // A new tensor rather than an in-place scale: backward may hand the same cotangent tensor to
    // several leaves (add's VJP passes g through), and scaling it in place would scale it twice.
    leaf->grad = (Tensor(leaf->grad) * scale).impl_ptr();
  }
  return norm;
}

}  // namespace ember::optim
