#include "models/sparsity/sparse_attention.h"

#include <algorithm>
#include <cmath>

#include "framework/core/parallel.h"
#include "models/sparsity/vector_kernels.h"
#include "ops/attention/attention.h"
#include "ops/elementwise/elementwise.h"
#include "ops/matmul/matmul.h"
#include "ops/shape/shape_ops.h"

namespace ember::sparsity {

void AttentionWeights::check() const {
  EMBER_CHECK(qkv_w.defined() && qkv_b.defined() && proj_w.defined() && proj_b.defined(),
              "AttentionWeights: every weight and bias must be defined");
  EMBER_CHECK(qkv_w.dim() == 2 && qkv_w.size(1) == 3 * qkv_w.size(0) && qkv_b.dim() == 1 &&
                  qkv_b.size(0) == qkv_w.size(1) && proj_w.dim() == 2 && proj_w.size(0) == qkv_w.size(0) &&
                  proj_w.size(1) == qkv_w.size(0) && proj_b.dim() == 1 && proj_b.size(0) == qkv_w.size(0),
              "AttentionWeights: expected qkv_w (C, 3C), qkv_b (3C), proj_w (C, C), proj_b (C); got qkv_w ",
              to_string(qkv_w.shape()), ", qkv_b ", to_string(qkv_b.shape()), ", proj_w ", to_string(proj_w.shape()),
              ", proj_b ", to_string(proj_b.shape()));
  EMBER_CHECK(n_head > 0 && qkv_w.size(0) % n_head == 0, "AttentionWeights: width ", qkv_w.size(0),
              " is not a positive multiple of n_head = ", n_head);
}

namespace {

void check_step(const char* op, const Tensor& x, int64_t C, int64_t H, int64_t hd, const Tensor& keys,
                const Tensor& values, int64_t t) {
  EMBER_CHECK(x.defined() && x.dim() == 2 && x.size(0) == 1 && x.size(1) == C && x.dtype() == DType::Float32, op,
              ": input must be float32 (1, ", C, "), got ", x.defined() ? str(x.dtype(), to_string(x.shape())) : "undefined");
  for (const Tensor* c : {&keys, &values}) {
    EMBER_CHECK(c->defined() && c->dim() == 3 && c->size(0) == H && c->size(2) == hd && c->dtype() == DType::Float32 &&
                    c->is_contiguous(),
                op, ": keys and values must be contiguous float32 (", H, ", capacity, ", hd, "), got ",
                c->defined() ? str(c->dtype(), to_string(c->shape())) : "undefined");
    check_cpu(*c, op);
  }
  EMBER_CHECK(keys.shape() == values.shape(), op, ": keys ", to_string(keys.shape()), " and values ",
              to_string(values.shape()), " differ");
  EMBER_CHECK(t >= 0 && t < keys.size(1), op, ": position ", t, " is outside the cache's capacity ", keys.size(1),
              " (expected 0 <= t < capacity)");
  check_cpu(x, op);
}

std::vector<float> to_floats(const Tensor& t) {
  EMBER_CHECK(t.dtype() == DType::Float32, "HeadSparseAttention: weights must be float32, got ", t.dtype());
  check_cpu(t, "HeadSparseAttention");
  return t.detach().contiguous().to_vector<float>();
}

}  // namespace

Tensor dense_attention_step(const Tensor& x, const AttentionWeights& w, const Tensor& keys, const Tensor& values,
                            int64_t t, const Tensor& head_mask, const std::string& impl) {
  w.check();
  const int64_t C = w.width(), H = w.n_head, hd = w.head_dim();
  check_step("dense_attention_step", x, C, H, hd, keys, values, t);
  AttentionOptions opt;
  opt.causal = true;  // as GPT2::Block: one query at the end sees every cached key
  opt.impl = parse_attention_impl(impl);
  std::vector<Tensor> qkv = split(matmul(x, w.qkv_w) + w.qkv_b, C, -1);  // three (1, C)
  auto by_head = [&](const Tensor& p) { return p.reshape({H, 1, hd}); };
  copy_strided(keys.slice(1, t, t + 1), by_head(qkv[1]));
  copy_strided(values.slice(1, t, t + 1), by_head(qkv[2]));
  Tensor y = attention(by_head(qkv[0]), keys.slice(1, 0, t + 1), values.slice(1, 0, t + 1), opt);  // (H, 1, hd)
  if (head_mask.defined()) {
    EMBER_CHECK(head_mask.shape() == Shape({H}) && head_mask.dtype() == DType::Float32,
                "dense_attention_step: head mask must be float32 (", H, "), got ",
                str(head_mask.dtype(), to_string(head_mask.shape())));
    y = y * head_mask.reshape({H, 1, 1});
  }
  return matmul(y.reshape({1, C}), w.proj_w) + w.proj_b;
}

HeadSparseAttention::HeadSparseAttention(const AttentionWeights& w) {
  w.check();
  C_ = w.width();
  H_ = w.n_head;
  hd_ = w.head_dim();
  std::vector<float> qkv = to_floats(w.qkv_w);  // (C, 3C)
  wt_.resize(size_t(3 * C_ * C_));
  for (int64_t c = 0; c < C_; ++c)
    for (int64_t j = 0; j < 3 * C_; ++j) wt_[size_t(j * C_ + c)] = qkv[size_t(c * 3 * C_ + j)];
  b_ = to_floats(w.qkv_b);
  proj_w_ = to_floats(w.proj_w);
  proj_b_ = to_floats(w.proj_b);
}

Tensor HeadSparseAttention::step(const Tensor& x, const std::vector<int32_t>& heads, const Tensor& keys,
                                 const Tensor& values, int64_t t, bool kv_every_head) const {
  check_step("HeadSparseAttention::step", x, C_, H_, hd_, keys, values, t);
  std::vector<uint8_t> kept(size_t(H_), 0);
  for (int32_t h : heads) {
    EMBER_CHECK(h >= 0 && h < H_, "HeadSparseAttention::step: head ", h, " is outside [0, ", H_, ")");
    EMBER_CHECK(!kept[size_t(h)], "HeadSparseAttention::step: head ", h, " appears twice");
    kept[size_t(h)] = 1;
  }
  Tensor xc = x.detach().contiguous();
  const float* xp = xc.data<float>();
  const int64_t cap = keys.size(1), n = t + 1, K = int64_t(heads.size());
  float* kp = keys.data<float>();
  float* vp = values.data<float>();

  // 1. The projections the step needs: queries of the kept heads, keys and values of the kept
  // heads (or of every head). Output j of W_qkv is one dot product with row j of W_qkv^T.
  std::vector<int32_t> rows;
  for (int32_t h : heads)
    for (int64_t d = 0; d < hd_; ++d) rows.push_back(int32_t(h * hd_ + d));
  for (int64_t h = 0; h < H_; ++h)
    if (kv_every_head || kept[size_t(h)])
      for (int64_t part = 1; part <= 2; ++part)
        for (int64_t d = 0; d < hd_; ++d) rows.push_back(int32_t(part * C_ + h * hd_ + d));
  std::vector<float> qkv(size_t(3 * C_));
  parallel_for(int64_t(rows.size()), 64, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      int64_t j = rows[size_t(r)];
      dot_tokens(wt_.data() + j * C_, xp, 1, C_, &qkv[size_t(j)]);
      qkv[size_t(j)] += b_[size_t(j)];
    }
  });
  for (int64_t h = 0; h < H_; ++h)
    if (kv_every_head || kept[size_t(h)]) {
      std::copy_n(qkv.data() + C_ + h * hd_, hd_, kp + (h * cap + t) * hd_);
      std::copy_n(qkv.data() + 2 * C_ + h * hd_, hd_, vp + (h * cap + t) * hd_);
    }

  // 2. Each kept head's attention over positions [0, t]: scores, softmax, weighted sum of values.
  std::vector<float> y(size_t(K * hd_), 0.0f);
  const float scale = 1.0f / std::sqrt(float(hd_));
  parallel_for(K, 1, [&](int64_t i0, int64_t i1) {
    std::vector<float> s(static_cast<size_t>(n));
    for (int64_t i = i0; i < i1; ++i) {
      int64_t h = heads[size_t(i)];
      dot_tokens(qkv.data() + h * hd_, kp + h * cap * hd_, n, hd_, s.data());
      float m = -INFINITY;
      for (int64_t j = 0; j < n; ++j) m = std::max(m, s[size_t(j)] * scale);
      float sum = 0;
      for (int64_t j = 0; j < n; ++j) sum += (s[size_t(j)] = std::exp(s[size_t(j)] * scale - m));
      float* yi = y.data() + i * hd_;
      for (int64_t j = 0; j < n; ++j) axpy(s[size_t(j)], vp + (h * cap + j) * hd_, yi, hd_);
      for (int64_t d = 0; d < hd_; ++d) yi[d] /= sum;
    }
  });

  // 3. c_proj over the kept heads' rows only. Threads split the output columns, so each owns its
  // slice of the output and reads only its slice of each row.
  Tensor out = empty({1, C_}, DType::Float32);
  float* op = out.data<float>();
  std::copy(proj_b_.begin(), proj_b_.end(), op);
  parallel_for(C_, 128, [&](int64_t c0, int64_t c1) {
    for (int64_t i = 0; i < K; ++i) {
      int64_t h = heads[size_t(i)];
      for (int64_t d = 0; d < hd_; ++d)
        axpy(y[size_t(i * hd_ + d)], proj_w_.data() + (h * hd_ + d) * C_ + c0, op + c0, c1 - c0);
    }
  });
  return out;
}

}  // namespace ember::sparsity
