#include <cmath>
#include <tuple>

#include "framework/core/parallel.h"

#include "models/sparsity/sparse_attention.h"
#include "study_kernels.h"
#include "test_util.h"

using namespace ember;
using namespace ember::sparsity;

namespace {

AttentionWeights random_weights(int64_t C, int64_t H, Generator& g) {
  AttentionWeights w;
  w.qkv_w = normal({C, 3 * C}, 0.0, 0.3, DType::Float32, &g);
  w.qkv_b = normal({3 * C}, 0.0, 0.3, DType::Float32, &g);
  w.proj_w = normal({C, C}, 0.0, 0.3, DType::Float32, &g);
  w.proj_b = normal({C}, 0.0, 0.3, DType::Float32, &g);
  w.n_head = H;
  return w;
}

// The step in float64 loops, from the formulas (sparse_attention.h), keeping the heads in `keep`.
std::vector<double> reference_step(const Tensor& x, const AttentionWeights& w, const Tensor& keys, const Tensor& values,
                                   int64_t t, const std::vector<int>& keep) {
  const int64_t C = w.width(), H = w.n_head, hd = w.head_dim(), cap = keys.size(1);
  std::vector<double> xv = x.to_vector<double>(), W = w.qkv_w.to_vector<double>(), b = w.qkv_b.to_vector<double>();
  std::vector<double> P = w.proj_w.to_vector<double>(), pb = w.proj_b.to_vector<double>();
  std::vector<double> K = keys.to_vector<double>(), V = values.to_vector<double>(), qkv(size_t(3 * C));
  for (int64_t j = 0; j < 3 * C; ++j) {
    qkv[size_t(j)] = b[size_t(j)];
    for (int64_t c = 0; c < C; ++c) qkv[size_t(j)] += xv[size_t(c)] * W[size_t(c * 3 * C + j)];
  }
  std::vector<double> out = pb;
  for (int64_t h = 0; h < H; ++h) {
    if (!keep[size_t(h)]) continue;
    auto key = [&](int64_t j, int64_t d) { return j == t ? qkv[size_t(C + h * hd + d)] : K[size_t((h * cap + j) * hd + d)]; };
    auto val = [&](int64_t j, int64_t d) { return j == t ? qkv[size_t(2 * C + h * hd + d)] : V[size_t((h * cap + j) * hd + d)]; };
    std::vector<double> s(size_t(t + 1));
    double m = -INFINITY, sum = 0;
    for (int64_t j = 0; j <= t; ++j) {
      for (int64_t d = 0; d < hd; ++d) s[size_t(j)] += qkv[size_t(h * hd + d)] * key(j, d);
      s[size_t(j)] /= std::sqrt(double(hd));
      m = std::max(m, s[size_t(j)]);
    }
    for (double& v : s) sum += (v = std::exp(v - m));
    for (int64_t d = 0; d < hd; ++d) {
      double y = 0;
      for (int64_t j = 0; j <= t; ++j) y += s[size_t(j)] / sum * val(j, d);
      for (int64_t o = 0; o < C; ++o) out[size_t(o)] += y * P[size_t((h * hd + d) * C + o)];
    }
  }
  return out;
}

}  // namespace

TEST(SparseAttention, KeptHeadsEqualTheDenseMaskedStepAndAFloat64Reference) {
  // Awkward sizes: head_dim 5, an odd width, the first and a middle cache position.
  const int64_t C = 15, H = 3, hd = 5, cap = 9;
  Generator g(21);
  AttentionWeights w = random_weights(C, H, g);
  HeadSparseAttention sparse(w);
  const std::vector<std::vector<int32_t>> sets = {{1}, {2, 0}, {2, 0, 1}, {}};
  for (int64_t t : {0, 7})
    for (const std::vector<int32_t>& heads : sets)
      for (bool kv_all : {true, false}) {
        Tensor x = normal({1, C}, 0.0, 1.0, DType::Float32, &g);
        Tensor k0 = normal({H, cap, hd}, 0.0, 1.0, DType::Float32, &g), v0 = normal({H, cap, hd}, 0.0, 1.0, DType::Float32, &g);
        Tensor kd = k0.clone(), vd = v0.clone(), ks = k0.clone(), vs = v0.clone();
        std::vector<int> keep(size_t(H), 0);
        Tensor mask = zeros({H});
        for (int32_t h : heads) keep[size_t(h)] = 1, mask.set({h}, 1.0);
        Tensor dense = dense_attention_step(x, w, kd, vd, t, mask);
        Tensor got = sparse.step(x, heads, ks, vs, t, kv_all);
        std::string what = str("t ", t, ", ", heads.size(), " heads, kv_every_head ", kv_all);
        EXPECT_TRUE(ember::testing::all_close(got, dense, 1e-5, 1e-4)) << what;
        Tensor want = from_vector(reference_step(x, w, k0, v0, t, keep), {1, C});
        EXPECT_TRUE(ember::testing::all_close(got.to(DType::Float64), want, 1e-5, 1e-4)) << what;
        EXPECT_TRUE(ember::testing::all_close(dense.to(DType::Float64), want, 1e-5, 1e-4)) << what;
        // The cache: the dense step writes every head's key and value at t; the sparse step the
        // kept heads' (or every head's with kv_every_head), and leaves the rest as they were.
        for (int64_t h = 0; h < H; ++h) {
          bool written = kv_all || keep[size_t(h)];
          for (const auto& [s, d, o] : {std::tuple{ks, kd, k0}, std::tuple{vs, vd, v0}}) {
            EXPECT_TRUE(ember::testing::all_close(s.slice(0, h, h + 1).slice(1, t, t + 1),
                                                  (written ? d : o).slice(0, h, h + 1).slice(1, t, t + 1), 1e-6, 1e-5))
                << what << ", head " << h;
            EXPECT_TRUE(ember::testing::all_close(s.slice(1, 0, t), o.slice(1, 0, t), 0, 0)) << what;  // earlier positions untouched
          }
        }
      }
}

TEST(SparseAttention, TwoThreadsGiveTheOneThreadResult) {
  ember::testing::register_study_kernels();  // the reference below runs the study's Algorithm 0
  const int64_t C = 256, H = 4, cap = 40, t = 33;
  Generator g(4);
  AttentionWeights w = random_weights(C, H, g);
  HeadSparseAttention sparse(w);
  Tensor x = normal({1, C}, 0.0, 1.0, DType::Float32, &g);
  Tensor k = normal({H, cap, C / H}, 0.0, 1.0, DType::Float32, &g), v = normal({H, cap, C / H}, 0.0, 1.0, DType::Float32, &g);
  int saved = num_threads();
  set_num_threads(1);
  Tensor one = sparse.step(x, {3, 1}, k, v, t, true);
  set_num_threads(2);
  Tensor two = sparse.step(x, {3, 1}, k, v, t, true);
  set_num_threads(saved);
  EXPECT_TRUE(ember::testing::all_close(two, one, 1e-6, 1e-5));
  Tensor mask = from_vector(std::vector<float>{0, 1, 0, 1}, {H});
  // Against Ember's ops (another summation order): float32 sums of length 256 with weights of
  // std 0.3 give scores of ~10, so the tolerance is wider than the first test's.
  EXPECT_TRUE(ember::testing::all_close(one, dense_attention_step(x, w, k, v, t, mask, "standard"), 1e-4, 1e-3));
}

TEST(SparseAttention, BadInputRaises) {
  Generator g(2);
  AttentionWeights w = random_weights(12, 3, g);
  HeadSparseAttention s(w);
  Tensor x = normal({1, 12}, 0.0, 1.0, DType::Float32, &g);
  Tensor k = zeros({3, 6, 4}, DType::Float32), v = zeros({3, 6, 4}, DType::Float32);
  EXPECT_EMBER_ERROR(s.step(x, {3}, k, v, 2, true), "head 3 is outside [0, 3)");
  EXPECT_EMBER_ERROR(s.step(x, {1, 1}, k, v, 2, true), "head 1 appears twice");
  EXPECT_EMBER_ERROR(s.step(x, {0}, k, v, 6, true), "outside the cache's capacity 6");
  EXPECT_EMBER_ERROR(s.step(zeros({2, 12}), {0}, k, v, 2, true), "input must be float32 (1, 12)");
  EXPECT_EMBER_ERROR(s.step(x, {0}, zeros({3, 4, 6}).transpose(1, 2), v, 2, true), "contiguous float32 (3, capacity, 4)");
  EXPECT_EMBER_ERROR(s.step(x, {0}, k, zeros({3, 5, 4}), 2, true), "differ");
  EXPECT_EMBER_ERROR(dense_attention_step(x, w, k, v, 2, ones({4})), "head mask must be float32 (3)");
  AttentionWeights bad = w;
  bad.n_head = 5;
  EXPECT_EMBER_ERROR((void)HeadSparseAttention{bad}, "not a positive multiple of n_head = 5");
  bad = w;
  bad.proj_w = zeros({12, 11});
  EXPECT_EMBER_ERROR(dense_attention_step(x, bad, k, v, 2), "proj_w (C, C)");
}
