#include <cmath>

#include "models/gpt2/model.h"
#include "models/sparsity/heads.h"
#include "models/sparsity/predictor.h"
#include "models/sparsity/statistics.h"
#include "models/sparsity/topk.h"
#include "test_util.h"

using namespace ember;
using namespace ember::sparsity;

TEST(SparsityHeads, NormsAndMaskByHand) {
  Generator g(1);
  Tensor heads = normal({2, 3, 5, 4}, 0.0, 1.0, DType::Float32, &g);
  Tensor norms = head_norms(heads);
  ASSERT_EQ(norms.shape(), Shape({2, 5, 3}));
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t h = 0; h < 3; ++h)
      for (int64_t t = 0; t < 5; ++t) {
        double s = 0;
        for (int64_t d = 0; d < 4; ++d) s += std::pow(heads.at({b, h, t, d}), 2);
        EXPECT_NEAR(norms.at({b, t, h}), std::sqrt(s), 1e-5);
      }
  Tensor mask = topk_mask(norms, 1);
  Tensor kept = apply_head_mask(heads, mask);
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t h = 0; h < 3; ++h)
      for (int64_t t = 0; t < 5; ++t)
        for (int64_t d = 0; d < 4; ++d)
          EXPECT_EQ(kept.at({b, h, t, d}), mask.at({b, t, h}) * heads.at({b, h, t, d}));
  EXPECT_EMBER_ERROR(apply_head_mask(heads, ones({2, 3, 5})), "mask must be float32 (2, 5, 3)");
  EXPECT_EMBER_ERROR(head_norms(zeros({2, 3, 5})), "(B, H, T, head_dim)");
}

TEST(SparsityHooks, KeepingEveryUnitOrHeadLeavesGpt2Unchanged) {
  gpt2::Config c;
  c.n_layer = 2;
  c.n_head = 2;
  c.n_embd = 16;
  c.vocab_size = 31;
  c.n_positions = 12;
  gpt2::GPT2 model(c, 3);
  Generator g(2);
  Tensor ids = randint({2, 9}, 0, 31, &g);
  autograd::NoGradGuard ng;
  Tensor dense = model.forward(ids);
  model.hooks.mlp_hidden = [](int64_t, const Tensor& a) { return keep_topk(a, a.size(-1), true); };
  model.hooks.attn_heads = [](int64_t, const Tensor& y) { return apply_head_mask(y, topk_mask(head_norms(y), 2)); };
  EXPECT_TRUE(ember::testing::all_close(model.forward(ids), dense, 0, 0));
  model.hooks.mlp_hidden = [](int64_t, const Tensor& a) { return keep_topk(a, 4, true); };
  EXPECT_FALSE(ember::testing::all_close(model.forward(ids), dense, 1e-6, 1e-6));
}

TEST(SparsityPredictor, BinaryCrossEntropyValuesAndGradients) {
  // Moderate logits: the textbook -(y log p + (1 - y) log(1 - p)) with p = sigmoid(z).
  Tensor z = from_vector(std::vector<double>{-2.5, -1.5, 0.3, 2.0, 4.0, 0.7}, {2, 3});
  Tensor y = from_vector(std::vector<double>{0, 1, 1, 0, 1, 0}, {2, 3});
  std::vector<double> zv = z.to_vector<double>(), yv = y.to_vector<double>();
  double want = 0;
  for (size_t i = 0; i < zv.size(); ++i) {
    double p = 1 / (1 + std::exp(-zv[i]));
    want -= yv[i] * std::log(p) + (1 - yv[i]) * std::log(1 - p);
  }
  EXPECT_NEAR(bce_with_logits(z, y).item(), want / 6, 1e-12);
  // Extreme logits stay finite: a confident right answer costs ~0, a confident wrong one ~|z|.
  Tensor big = from_vector(std::vector<double>{-80.0, 90.0}, {2});
  EXPECT_NEAR(bce_with_logits(big, from_vector(std::vector<double>{0, 1}, {2})).item(), 0.0, 1e-30);
  EXPECT_NEAR(bce_with_logits(big, from_vector(std::vector<double>{1, 0}, {2})).item(), 85.0, 1e-9);
  EXPECT_TRUE(ember::testing::grad_ok([&](const std::vector<Tensor>& in) { return bce_with_logits(in[0], y); }, {z}));
  EXPECT_EMBER_ERROR(bce_with_logits(z, zeros({3, 2}, DType::Float64)), "same shape");
}

TEST(SparsityPredictor, LearnsLowRankTopKSetsFarBetterThanChance) {
  // Targets: the top-k units of a hidden rank-4 linear map of x. A rank-8 predictor can learn it.
  const int64_t C = 16, N = 48, M = 1536, k = 8;
  Generator g(7);
  Tensor x = normal({M, C}, 0.0, 1.0, DType::Float32, &g);
  Tensor map = matmul(normal({C, 4}, 0.0, 1.0, DType::Float32, &g), normal({4, N}, 0.0, 1.0, DType::Float32, &g));
  Tensor oracle = topk_mask(matmul(x, map), k);
  SparsityPredictor p(C, 8, N, g);
  PredictorTraining opt;
  opt.epochs = 12;
  opt.batch = 128;
  opt.lr = 1e-2;
  std::vector<double> losses = train_predictor(p, x, oracle, opt);
  ASSERT_EQ(losses.size(), 12u);
  EXPECT_LT(losses.back(), 0.7 * losses.front());
  autograd::NoGradGuard ng;
  Tensor xt = normal({256, C}, 0.0, 1.0, DType::Float32, &g);  // unseen inputs
  Tensor want = topk_mask(matmul(xt, map), k);
  double recall = set_recall(topk_mask(p.forward(xt), k), want);
  EXPECT_GT(recall, 0.7) << "chance is " << double(k) / N;
  EXPECT_EMBER_ERROR(train_predictor(p, x, oracle.slice(1, 0, 10), opt), "must be (M, 16) and (M, 48)");
}

TEST(SparsityPredictor, ScorerMatchesTheModule) {
  Generator g(9);
  SparsityPredictor p(33, 7, 127, g);
  PredictorScorer s(p);
  for (int64_t B : {1, 5}) {
    Tensor x = normal({B, 33}, 0.0, 1.0, DType::Float32, &g);
    autograd::NoGradGuard ng;
    EXPECT_TRUE(ember::testing::all_close(s.scores(x), p.forward(x), 1e-5, 1e-4));
  }
  EXPECT_EMBER_ERROR(s.scores(zeros({2, 32})), "(B, 33)");
}
