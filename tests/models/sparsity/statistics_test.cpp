#include "models/sparsity/statistics.h"

#include <algorithm>
#include <cmath>

#include "models/sparsity/topk.h"
#include "test_util.h"

using namespace ember;
using namespace ember::sparsity;

TEST(SparsityStatistics, MeansOverRowsAndStaticTopK) {
  ActivationMeans means(4), mags(4, /*magnitude=*/true);
  Tensor a = from_vector(std::vector<float>{1, -5, 2, 0, 3, -5, 0, 1}, {2, 4});
  Tensor b = from_vector(std::vector<float>{2, 4, 1, 2}, {1, 1, 4});  // any leading shape
  means.add(a);
  means.add(b);
  mags.add(a);
  mags.add(b);
  EXPECT_EQ(means.rows(), 3);
  std::vector<double> m = means.means();
  EXPECT_NEAR(m[0], 2.0, 1e-12);
  EXPECT_NEAR(m[1], -2.0, 1e-12);
  EXPECT_NEAR(m[2], 1.0, 1e-12);
  EXPECT_NEAR(m[3], 1.0, 1e-12);
  EXPECT_EQ(means.top(2), (std::vector<int64_t>{0, 2}));  // tie between 2 and 3: the lower index
  EXPECT_EQ(mags.top(1), (std::vector<int64_t>{1}));      // |-5|, |-5|, |4|: mean 14/3
  EXPECT_EMBER_ERROR(means.add(from_vector(std::vector<float>{1, 2, 3}, {1, 3})), "expected 4");
  EXPECT_EMBER_ERROR(ActivationMeans(4).top(1), "no activations");
}

TEST(SparsityStatistics, UnitsForNormFractionByHand) {
  std::vector<float> v = {3, 0, -4};  // norm 5; |-4| alone carries 4/5 of it
  EXPECT_EQ(units_for_norm_fraction(v.data(), 3, 0.8), 1);
  EXPECT_EQ(units_for_norm_fraction(v.data(), 3, 0.81), 2);
  EXPECT_EQ(units_for_norm_fraction(v.data(), 3, 1.0), 2);  // the zero never counts
  EXPECT_EQ(units_for_norm_fraction(v.data(), 3, 0.0), 1);
  std::vector<float> z = {0, 0};
  EXPECT_EQ(units_for_norm_fraction(z.data(), 2, 0.9), 0);
  EXPECT_EMBER_ERROR(units_for_norm_fraction(v.data(), 3, 1.2), "fraction");
}

TEST(SparsityStatistics, NormCoverageIsTheSmallestSufficientTopSet) {
  Generator g(5);
  Tensor x = normal({6, 127}, 0.0, 1.0, DType::Float32, &g);
  std::vector<double> fr = {0.5, 0.9, 0.99};
  auto cov = norm_coverage(x, fr);
  std::vector<float> all = x.to_vector<float>();
  for (size_t f = 0; f < fr.size(); ++f)
    for (int64_t r = 0; r < 6; ++r) {
      int64_t c = cov[f][size_t(r)];
      std::vector<float> row(all.begin() + r * 127, all.begin() + (r + 1) * 127);
      double total = 0;
      for (float e : row) total += double(e) * e;
      Tensor kept = keep_topk(from_vector(row, {1, 127}), c, true), fewer = keep_topk(from_vector(row, {1, 127}), c - 1, true);
      auto sq = [](const Tensor& t) { double s = 0; for (float e : t.to_vector<float>()) s += double(e) * e; return s; };
      EXPECT_GE(std::sqrt(sq(kept) / total), fr[f] - 1e-9);  // c units suffice ...
      EXPECT_LT(std::sqrt(sq(fewer) / total), fr[f]);        // ... and c - 1 do not
    }
  EXPECT_LT(cov[0][0], cov[2][0]);
}

TEST(SparsityStatistics, RecallOfPredictedSets) {
  Tensor oracle = from_vector(std::vector<float>{1, 1, 0, 0, 0, 1, 1, 0}, {2, 4});
  Tensor pred = from_vector(std::vector<float>{1, 0, 1, 0, 0, 1, 1, 0}, {2, 4});
  EXPECT_NEAR(set_recall(pred, oracle), 3.0 / 4.0, 1e-12);
  EXPECT_NEAR(set_recall(oracle, oracle), 1.0, 1e-12);
  EXPECT_NEAR(set_recall(zeros({2, 4}), oracle), 0.0, 1e-12);
  EXPECT_EMBER_ERROR(set_recall(pred, zeros({4, 2})), "same shape");
  EXPECT_EMBER_ERROR(set_recall(pred * 2.0, oracle), "0 and 1");
}
