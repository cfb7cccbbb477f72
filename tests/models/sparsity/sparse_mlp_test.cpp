#include "models/sparsity/sparse_mlp.h"

#include <cmath>

#include "models/sparsity/topk.h"
#include "test_util.h"

using namespace ember;
using namespace ember::sparsity;

namespace {

MlpWeights random_weights(int64_t C, int64_t N, uint64_t seed) {
  Generator g(seed);
  MlpWeights w;
  w.fc_w = normal({C, N}, 0.0, 0.3, DType::Float32, &g);
  w.fc_b = normal({N}, 0.0, 0.1, DType::Float32, &g);
  w.proj_w = normal({N, C}, 0.0, 0.3, DType::Float32, &g);
  w.proj_b = normal({C}, 0.0, 0.1, DType::Float32, &g);
  return w;
}

// float64 reference of the masked MLP, written out with loops.
std::vector<double> reference(const Tensor& x, const MlpWeights& w, const Tensor& mask) {
  int64_t B = x.size(0), C = w.width(), N = w.hidden();
  std::vector<float> xv = x.to_vector<float>(), w1 = w.fc_w.to_vector<float>(), b1 = w.fc_b.to_vector<float>(),
                     w2 = w.proj_w.to_vector<float>(), b2 = w.proj_b.to_vector<float>(), m = mask.to_vector<float>();
  std::vector<double> y(size_t(B * C));
  for (int64_t b = 0; b < B; ++b) {
    std::vector<double> h(static_cast<size_t>(N));
    for (int64_t j = 0; j < N; ++j) {
      double s = b1[size_t(j)];
      for (int64_t c = 0; c < C; ++c) s += double(xv[size_t(b * C + c)]) * w1[size_t(c * N + j)];
      h[size_t(j)] = m[size_t(b * N + j)] * 0.5 * s * (1 + std::tanh(std::sqrt(2 / M_PI) * (s + 0.044715 * s * s * s)));
    }
    for (int64_t c = 0; c < C; ++c) {
      double s = b2[size_t(c)];
      for (int64_t j = 0; j < N; ++j) s += h[size_t(j)] * w2[size_t(j * C + c)];
      y[size_t(b * C + c)] = s;
    }
  }
  return y;
}

Tensor as_tensor(const std::vector<double>& v, const Shape& s) { return from_vector(v, s); }

}  // namespace

TEST(SparsityMlp, DenseMaskedMatchesFloat64Reference) {
  MlpWeights w = random_weights(33, 127, 1);
  Generator g(2);
  Tensor x = normal({7, 33}, 0.0, 1.0, DType::Float32, &g);
  Tensor mask = random_mask({7, 127}, 40, g);
  EXPECT_TRUE(ember::testing::all_close(dense_mlp(x, w, mask), as_tensor(reference(x, w, mask), {7, 33}), 1e-4, 1e-4));
  EXPECT_TRUE(ember::testing::all_close(dense_mlp(x, w), as_tensor(reference(x, w, ones({7, 127})), {7, 33}), 1e-4, 1e-4));
}

TEST(SparsityMlp, GatheredEqualsDenseWithTheSameMask) {
  for (int64_t C : {1, 7, 33}) {
    for (int64_t N : {1, 33, 127}) {
      for (int64_t B : {1, 7}) {
        MlpWeights w = random_weights(C, N, uint64_t(C * 1000 + N));
        GatheredMLP g(w);
        Generator gen(uint64_t(B + C + N));
        Tensor x = normal({B, C}, 0.0, 1.0, DType::Float32, &gen);
        // Different tokens keep different numbers of units, including none and all.
        std::vector<Tensor> rows;
        for (int64_t b = 0; b < B; ++b) {
          int64_t k = b == 0 ? N : (b == 1 ? 0 : 1 + int64_t(gen.next_u64() % uint64_t(N)));
          rows.push_back(random_mask({1, N}, k, gen));
        }
        Tensor mask = concat(rows, 0);
        Tensor want = dense_mlp(x, w, mask);
        Tensor got = g.forward(x, mask_to_sets(mask));
        EXPECT_TRUE(ember::testing::all_close(got, want, 1e-5, 1e-4)) << "C " << C << " N " << N << " B " << B;
        EXPECT_TRUE(ember::testing::all_close(g.forward_all(x), dense_mlp(x, w), 1e-5, 1e-4));
      }
    }
  }
}

TEST(SparsityMlp, GatheredAtGpt2ShapeWithTopKSets) {
  MlpWeights w = random_weights(64, 256, 9);
  GatheredMLP g(w);
  Generator gen(4);
  Tensor x = normal({3, 64}, 0.0, 1.0, DType::Float32, &gen);
  // Oracle sets: the top 10% of the dense hidden units of each token.
  Tensor hidden = matmul(x, w.fc_w) + w.fc_b;
  Tensor mask = topk_mask(hidden, 26, true);
  EXPECT_TRUE(ember::testing::all_close(g.forward(x, mask_to_sets(mask)), dense_mlp(x, w, mask), 1e-5, 1e-4));
  // ... and sparse differs from dense, so the comparison above can fail.
  EXPECT_FALSE(ember::testing::all_close(g.forward(x, mask_to_sets(mask)), dense_mlp(x, w), 1e-5, 1e-4));
}

TEST(SparsityMlp, BadInputRaises) {
  MlpWeights w = random_weights(8, 16, 1);
  GatheredMLP g(w);
  Tensor x = zeros({2, 8});
  EXPECT_EMBER_ERROR(g.forward(x, {{1}}), "1 index sets for 2 tokens");
  EXPECT_EMBER_ERROR(g.forward(x, {{1}, {16}}), "outside");
  EXPECT_EMBER_ERROR(g.forward(x, {{1, 1}, {2}}), "twice");
  EXPECT_EMBER_ERROR(g.forward(zeros({2, 9}), {{1}, {2}}), "(B, 8)");
  MlpWeights bad = w;
  bad.proj_w = zeros({16, 9});
  EXPECT_EMBER_ERROR(GatheredMLP{bad}, "proj_w");
  EXPECT_EMBER_ERROR(dense_mlp(x, w, ones({2, 15})), "hidden mask");
}
