#include <algorithm>
#include <cmath>

#include "models/gpt2/model.h"
#include "models/sparsity/head_predictor.h"
#include "models/sparsity/heads.h"
#include "models/sparsity/statistics.h"
#include "models/sparsity/topk.h"
#include "test_util.h"

using namespace ember;
using namespace ember::sparsity;

TEST(SparsityHeadPredictor, TargetsAreEachTokensLargestHeadsByNorm) {
  const int64_t B = 2, H = 5, T = 3, D = 4, k = 2;
  Generator g(11);
  Tensor heads = normal({B, H, T, D}, 0.0, 1.0, DType::Float32, &g);
  Tensor y = head_topk_targets(heads, k);
  ASSERT_EQ(y.shape(), Shape({B * T, H}));
  for (int64_t b = 0; b < B; ++b)
    for (int64_t t = 0; t < T; ++t) {
      std::vector<std::pair<double, int64_t>> norms;  // float64, by hand
      for (int64_t h = 0; h < H; ++h) {
        double s = 0;
        for (int64_t d = 0; d < D; ++d) s += std::pow(heads.at({b, h, t, d}), 2);
        norms.push_back({std::sqrt(s), h});
      }
      std::sort(norms.rbegin(), norms.rend());
      for (int64_t i = 0; i < H; ++i)
        EXPECT_EQ(y.at({b * T + t, norms[size_t(i)].second}), i < k ? 1.0 : 0.0) << "b " << b << " t " << t;
    }
  EXPECT_EMBER_ERROR(head_topk_targets(heads, 0), "expected 1 to 5");
  EXPECT_EMBER_ERROR(head_topk_targets(heads, 6), "expected 1 to 5");
  EXPECT_EMBER_ERROR(head_topk_targets(zeros({2, 5, 3}), 1), "(B, H, T, head_dim)");
}

// Targets: each input's top-k heads under a hidden rank-2 linear map of x, the kind of rule a
// linear (or low-rank) scorer can represent. Both forms must learn it far above chance (k/H).
TEST(SparsityHeadPredictor, LearnsALinearTopKRuleFarBetterThanChance) {
  const int64_t C = 24, H = 8, M = 2048, k = 3;
  Generator g(5);
  Tensor x = normal({M, C}, 0.0, 1.0, DType::Float32, &g);
  Tensor map = matmul(normal({C, 2}, 0.0, 1.0, DType::Float32, &g), normal({2, H}, 0.0, 1.0, DType::Float32, &g));
  Tensor oracle = topk_mask(matmul(x, map), k);
  Tensor xt = normal({512, C}, 0.0, 1.0, DType::Float32, &g);  // unseen inputs
  Tensor want = topk_mask(matmul(xt, map), k);
  for (int64_t rank : {0, 4}) {
    HeadPredictor p(C, H, rank, g);
    EXPECT_EQ(p.num_parameters(), rank == 0 ? C * H + H : C * rank + rank * H + H);
    PredictorTraining opt;
    opt.epochs = 16;
    opt.batch = 128;
    opt.lr = 1e-2;
    std::vector<double> losses = train_head_predictor(p, x, oracle, opt);
    ASSERT_EQ(losses.size(), 16u);
    EXPECT_LT(losses.back(), 0.7 * losses.front()) << "rank " << rank;
    double recall = set_recall(p.predict_mask(xt, k), want);
    EXPECT_GT(recall, 0.85) << "rank " << rank << "; chance is " << double(k) / H;
  }
}

TEST(SparsityHeadPredictor, MaskShapeAndBadInput) {
  Generator g(3);
  HeadPredictor p(10, 6, 0, g);
  EXPECT_EQ(p.name(), "HeadPredictor(10 -> 6)");
  EXPECT_EQ(HeadPredictor(10, 6, 3, g).name(), "HeadPredictor(10 -> 3 -> 6)");
  Tensor x = normal({2, 7, 10}, 0.0, 1.0, DType::Float32, &g);
  Tensor m = p.predict_mask(x, 2);
  ASSERT_EQ(m.shape(), Shape({2, 7, 6}));  // the (B, T, H) form apply_head_mask takes
  autograd::NoGradGuard ng;
  EXPECT_TRUE(ember::testing::all_close(m, topk_mask(p.forward(x), 2), 0, 0));
  EXPECT_TRUE(ember::testing::all_close(m.sum(-1), full({2, 7}, 2.0), 0, 0));
  EXPECT_EMBER_ERROR(p.predict_mask(x, 0), "expected 1 to 6");
  EXPECT_EMBER_ERROR(p.predict_mask(x, 7), "expected 1 to 6");
  EXPECT_EMBER_ERROR(p.forward(zeros({3, 9})), "(..., 10)");
  EXPECT_EMBER_ERROR(HeadPredictor(10, 6, -1, g), "rank >= 0");
  EXPECT_EMBER_ERROR(HeadPredictor(0, 6, 0, g), "positive input width");
  EXPECT_EMBER_ERROR(train_head_predictor(p, zeros({4, 10}), zeros({4, 5}), {}), "must be (M, 10) and (M, 6)");
  PredictorTraining none;
  none.epochs = 0;
  EXPECT_EMBER_ERROR(train_head_predictor(p, zeros({4, 10}), zeros({4, 6}), none), "must be positive");
}

TEST(SparsityPredictor, TrainBceFitsAnyScorerModule) {
  // A plain nn::Linear through the shared loop: the loss falls, and each step is reported.
  const int64_t C = 12, N = 20, M = 1024;
  Generator g(8);
  Tensor x = normal({M, C}, 0.0, 1.0, DType::Float32, &g);
  Tensor y = topk_mask(matmul(x, normal({C, N}, 0.0, 1.0, DType::Float32, &g)), 5);
  nn::Linear lin(C, N, g);
  PredictorTraining opt;
  opt.epochs = 6;
  opt.batch = 100;
  opt.lr = 1e-2;
  int64_t steps = 0, total = 0;
  std::vector<double> losses =
      train_bce(lin, C, N, x, y, opt, [&](int64_t s, int64_t n, double) { steps = s, total = n; });
  EXPECT_EQ(steps, 6 * 11);
  EXPECT_EQ(total, 6 * 11);
  EXPECT_LT(losses.back(), 0.7 * losses.front());
  EXPECT_EMBER_ERROR(train_bce(lin, C, N, x, y.slice(1, 0, 4), opt, nullptr, "my_trainer"), "my_trainer: inputs");
}

TEST(SparsityHooks, AttentionInputHookSeesLn1OfTheBlockInput) {
  gpt2::Config c;
  c.n_layer = 3;
  c.n_head = 2;
  c.n_embd = 8;
  c.vocab_size = 19;
  c.n_positions = 10;
  gpt2::GPT2 model(c, 4);
  Generator g(6);
  Tensor ids = randint({2, 7}, 0, 19, &g);
  std::vector<int64_t> layers;
  Tensor first;
  model.hooks.attn_input = [&](int64_t l, const Tensor& h) {
    layers.push_back(l);
    if (l == 0) first = h;
  };
  {
    autograd::NoGradGuard ng;
    model.forward(ids);
    EXPECT_EQ(layers, (std::vector<int64_t>{0, 1, 2}));
    ASSERT_EQ(first.shape(), Shape({2, 7, 8}));
    // Layer 0's block input is the embedding sum; its ln_1 must be what the hook saw.
    Tensor x0 = embedding(model.wte, ids) + model.wpe.slice(0, 0, 7);
    EXPECT_TRUE(ember::testing::all_close(first, model.blocks[0]->ln_1->forward(x0), 1e-6, 1e-6));
  }
  model.checkpoint_blocks = true;  // a replayed block would call the hook twice
  EXPECT_EMBER_ERROR(model.forward(ids), "checkpoint_blocks");
}
