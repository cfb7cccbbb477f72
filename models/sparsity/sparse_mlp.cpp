#include "models/sparsity/sparse_mlp.h"

#include <algorithm>

#include "framework/core/parallel.h"
#include "models/sparsity/vector_kernels.h"
#include "ops/elementwise/elementwise.h"
#include "ops/elementwise/unary_kinds.h"
#include "ops/matmul/matmul.h"

namespace ember::sparsity {

void MlpWeights::check() const {
  EMBER_CHECK(fc_w.defined() && fc_b.defined() && proj_w.defined() && proj_b.defined(),
              "MlpWeights: every weight and bias must be defined");
  EMBER_CHECK(fc_w.dim() == 2 && proj_w.dim() == 2 && fc_b.dim() == 1 && proj_b.dim() == 1 &&
                  proj_w.size(0) == fc_w.size(1) && proj_w.size(1) == fc_w.size(0) && fc_b.size(0) == fc_w.size(1) &&
                  proj_b.size(0) == fc_w.size(0),
              "MlpWeights: expected fc_w (C, N), fc_b (N), proj_w (N, C), proj_b (C); got fc_w ", to_string(fc_w.shape()),
              ", fc_b ", to_string(fc_b.shape()), ", proj_w ", to_string(proj_w.shape()), ", proj_b ",
              to_string(proj_b.shape()));
}

Tensor dense_mlp(const Tensor& x, const MlpWeights& w, const Tensor& hidden_mask) {
  w.check();
  EMBER_CHECK(x.defined() && x.dim() >= 1 && x.size(-1) == w.width(), "dense_mlp: input ",
              x.defined() ? to_string(x.shape()) : "undefined", " must be (..., ", w.width(), ")");
  Tensor h = gelu(matmul(x, w.fc_w) + w.fc_b, /*tanh_approximation=*/true);
  if (hidden_mask.defined()) {
    EMBER_CHECK(hidden_mask.shape() == h.shape(), "dense_mlp: hidden mask ", to_string(hidden_mask.shape()),
                " must match the hidden units ", to_string(h.shape()));
    h = h * hidden_mask;
  }
  return matmul(h, w.proj_w) + w.proj_b;
}

namespace {

std::vector<float> to_floats(const Tensor& t) {
  EMBER_CHECK(t.dtype() == DType::Float32, "GatheredMLP: weights must be float32, got ", t.dtype());
  check_cpu(t, "GatheredMLP");
  return t.detach().contiguous().to_vector<float>();
}

}  // namespace

GatheredMLP::GatheredMLP(const MlpWeights& w) {
  w.check();
  C_ = w.width();
  N_ = w.hidden();
  std::vector<float> w1 = to_floats(w.fc_w);
  w1t_.resize(size_t(N_ * C_));
  for (int64_t c = 0; c < C_; ++c)
    for (int64_t j = 0; j < N_; ++j) w1t_[size_t(j * C_ + c)] = w1[size_t(c * N_ + j)];
  b1_ = to_floats(w.fc_b);
  w2_ = to_floats(w.proj_w);
  b2_ = to_floats(w.proj_b);
}

Tensor GatheredMLP::forward(const Tensor& x, const std::vector<std::vector<int32_t>>& sets) const {
  EMBER_CHECK(x.defined() && x.dim() == 2 && x.size(1) == C_ && x.dtype() == DType::Float32,
              "GatheredMLP::forward: input must be float32 (B, ", C_, "), got ",
              x.defined() ? str(x.dtype(), to_string(x.shape())) : "undefined");
  check_cpu(x, "GatheredMLP::forward");
  const int64_t B = x.size(0);
  EMBER_CHECK(int64_t(sets.size()) == B, "GatheredMLP::forward: ", sets.size(), " index sets for ", B, " tokens");
  Tensor xc = x.detach().contiguous();
  const float* xp = xc.data<float>();

  // Which token keeps which unit (B x N bytes), and the union of the kept units, ascending.
  std::vector<uint8_t> keep(size_t(B * N_), 0);
  std::vector<uint8_t> any(size_t(N_), 0);
  for (int64_t b = 0; b < B; ++b)
    for (int32_t j : sets[size_t(b)]) {
      EMBER_CHECK(j >= 0 && j < N_, "GatheredMLP::forward: unit ", j, " of token ", b, " is outside [0, ", N_, ")");
      EMBER_CHECK(!keep[size_t(b * N_ + j)], "GatheredMLP::forward: unit ", j, " appears twice for token ", b);
      keep[size_t(b * N_ + j)] = 1;
      any[size_t(j)] = 1;
    }
  std::vector<int32_t> units;
  for (int64_t j = 0; j < N_; ++j)
    if (any[size_t(j)]) units.push_back(int32_t(j));
  const int64_t U = int64_t(units.size());

  // Phase 1: the kept units' activations h (U x B), one pass over each unit's W1 column.
  std::vector<float> h(size_t(U * B));
  parallel_for(U, 32, [&](int64_t u0, int64_t u1) {
    for (int64_t u = u0; u < u1; ++u) {
      int64_t j = units[size_t(u)];
      float* hu = h.data() + u * B;
      dot_tokens(w1t_.data() + j * C_, xp, B, C_, hu);
      for (int64_t b = 0; b < B; ++b)
        hu[b] = keep[size_t(b * N_ + j)] ? apply_unary<float>(UnaryOp::GeluTanh, hu[b] + b1_[size_t(j)]) : 0.0f;
    }
  });

  // Phase 2: y = b2 + sum over kept units of h * (row j of W2). Threads split the output columns,
  // so each owns its slice of y and reads only its slice of each kept row.
  Tensor y = empty({B, C_}, DType::Float32);
  float* yp = y.data<float>();
  for (int64_t b = 0; b < B; ++b) std::copy(b2_.begin(), b2_.end(), yp + b * C_);
  parallel_for(C_, 128, [&](int64_t c0, int64_t c1) {
    for (int64_t u = 0; u < U; ++u) {
      const float* w2row = w2_.data() + int64_t(units[size_t(u)]) * C_ + c0;
      const float* hu = h.data() + u * B;
      for (int64_t b = 0; b < B; ++b)
        if (hu[b] != 0.0f) axpy(hu[b], w2row, yp + b * C_ + c0, c1 - c0);
    }
  });
  return y;
}

Tensor GatheredMLP::forward_all(const Tensor& x) const {
  EMBER_CHECK(x.defined() && x.dim() == 2, "GatheredMLP::forward_all: input must be (B, C)");
  std::vector<int32_t> every(static_cast<size_t>(N_));
  for (int64_t j = 0; j < N_; ++j) every[size_t(j)] = int32_t(j);
  return forward(x, std::vector<std::vector<int32_t>>(static_cast<size_t>(x.size(0)), every));
}

}  // namespace ember::sparsity
