#include "models/sparsity/topk.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <set>

#include "test_util.h"

using namespace ember;
using namespace ember::sparsity;

namespace {

// Reference: sort all indices by (key descending, index ascending), take k, sort ascending.
std::vector<int64_t> reference_topk(const std::vector<float>& v, int64_t k, bool by_magnitude) {
  std::vector<int64_t> idx(v.size());
  std::iota(idx.begin(), idx.end(), int64_t(0));
  auto key = [&](int64_t i) { return by_magnitude ? std::fabs(v[size_t(i)]) : v[size_t(i)]; };
  std::stable_sort(idx.begin(), idx.end(), [&](int64_t a, int64_t b) { return key(a) > key(b); });
  idx.resize(size_t(k));
  std::sort(idx.begin(), idx.end());
  return idx;
}

Tensor random_f32(const Shape& shape, uint64_t seed) {
  Generator g(seed);
  return normal(shape, 0.0, 1.0, DType::Float32, &g);
}

}  // namespace

TEST(SparsityTopk, MatchesSortingReferenceOnAwkwardRows) {
  for (int64_t n : {1, 7, 33, 127}) {
    for (bool mag : {false, true}) {
      Tensor x = random_f32({3, n}, uint64_t(n) * 7 + mag);
      std::vector<float> all = x.to_vector<float>();
      for (int64_t k : std::vector<int64_t>{0, 1, n / 2, n - 1, n}) {
        if (k < 0) continue;
        Tensor idx = topk_indices(x, k, mag);
        ASSERT_EQ(idx.shape(), Shape({3, k}));
        std::vector<int64_t> got = idx.to_vector<int64_t>();
        for (int64_t r = 0; r < 3; ++r) {
          std::vector<float> row(all.begin() + r * n, all.begin() + (r + 1) * n);
          std::vector<int64_t> want = reference_topk(row, k, mag);
          EXPECT_EQ(std::vector<int64_t>(got.begin() + r * k, got.begin() + (r + 1) * k), want)
              << "n " << n << " k " << k << " magnitude " << mag << " row " << r;
        }
      }
    }
  }
}

TEST(SparsityTopk, MagnitudeRankingKeepsLargeNegatives) {
  Tensor x = from_vector(std::vector<float>{0.5f, -3.0f, 1.0f, -0.1f}, {1, 4});
  EXPECT_EQ(topk_indices(x, 2, false).to_vector<int64_t>(), (std::vector<int64_t>{0, 2}));
  EXPECT_EQ(topk_indices(x, 2, true).to_vector<int64_t>(), (std::vector<int64_t>{1, 2}));
}

TEST(SparsityTopk, TiesGoToTheLowerIndex) {
  Tensor x = from_vector(std::vector<float>{1, 2, 2, 2, 0}, {1, 5});
  EXPECT_EQ(topk_indices(x, 2).to_vector<int64_t>(), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(topk_indices(x, 3).to_vector<int64_t>(), (std::vector<int64_t>{1, 2, 3}));
}

TEST(SparsityTopk, MaskAndKeepAgreeWithIndicesOnBatchedAndTransposedInput) {
  Tensor base = random_f32({2, 33, 5}, 11);
  Tensor x = base.transpose(1, 2);  // (2, 5, 33), not contiguous
  ASSERT_FALSE(x.is_contiguous());
  const int64_t k = 9;
  Tensor idx = topk_indices(x, k), mask = topk_mask(x, k), kept = keep_topk(x, k);
  ASSERT_EQ(mask.shape(), x.shape());
  std::vector<float> xv = x.contiguous().to_vector<float>(), mv = mask.to_vector<float>(), kv = kept.to_vector<float>();
  std::vector<int64_t> iv = idx.to_vector<int64_t>();
  for (int64_t r = 0; r < 10; ++r) {
    std::set<int64_t> chosen(iv.begin() + r * k, iv.begin() + (r + 1) * k);
    EXPECT_EQ(int64_t(chosen.size()), k);
    for (int64_t i = 0; i < 33; ++i) {
      bool in = chosen.count(i) > 0;
      EXPECT_EQ(mv[size_t(r * 33 + i)], in ? 1.0f : 0.0f);
      EXPECT_EQ(kv[size_t(r * 33 + i)], in ? xv[size_t(r * 33 + i)] : 0.0f);
    }
  }
}

TEST(SparsityTopk, FractionsToCounts) {
  EXPECT_EQ(k_for_fraction(1.0, 512), 512);
  EXPECT_EQ(k_for_fraction(0.1, 512), 51);
  EXPECT_EQ(k_for_fraction(0.001, 512), 1);  // never zero units
  EXPECT_EQ(k_for_fraction(0.5, 7), 4);
  EXPECT_EMBER_ERROR(k_for_fraction(0.0, 8), "fraction");
  EXPECT_EMBER_ERROR(k_for_fraction(1.5, 8), "fraction");
}

TEST(SparsityTopk, RandomMaskHasKOnesPerRowAndVaries) {
  Generator g(3);
  Tensor m = random_mask({50, 40}, 7, g);
  std::vector<float> v = m.to_vector<float>();
  std::set<std::vector<float>> distinct;
  std::vector<int64_t> hits(40, 0);
  for (int64_t r = 0; r < 50; ++r) {
    std::vector<float> row(v.begin() + r * 40, v.begin() + (r + 1) * 40);
    EXPECT_EQ(std::accumulate(row.begin(), row.end(), 0.0f), 7.0f);
    for (int64_t i = 0; i < 40; ++i) hits[size_t(i)] += row[size_t(i)] != 0;
    distinct.insert(row);
  }
  EXPECT_GT(distinct.size(), 45u);
  EXPECT_GT(*std::min_element(hits.begin(), hits.end()), 0);  // every unit drawn at some point
  Generator g2(3);
  EXPECT_TRUE(ember::testing::all_close(random_mask({50, 40}, 7, g2), m, 0, 0));  // seeded: repeatable
}

TEST(SparsityTopk, MaskFromIndicesAndSets) {
  Tensor m = mask_from_indices({2, 6}, {4, 1});
  EXPECT_EQ(m.to_vector<float>(), (std::vector<float>{0, 1, 0, 0, 1, 0, 0, 1, 0, 0, 1, 0}));
  std::vector<std::vector<int32_t>> sets = mask_to_sets(m);
  ASSERT_EQ(sets.size(), 2u);
  EXPECT_EQ(sets[0], (std::vector<int32_t>{1, 4}));
  EXPECT_EMBER_ERROR(mask_from_indices({2, 6}, {6}), "outside");
  EXPECT_EMBER_ERROR(mask_from_indices({2, 6}, {1, 1}), "twice");
}

TEST(SparsityTopk, BadInputRaises) {
  Tensor x = random_f32({2, 5}, 1);
  EXPECT_EMBER_ERROR(topk_indices(x, 6), "k = 6");
  EXPECT_EMBER_ERROR(topk_mask(x, -1), "k = -1");
  EXPECT_EMBER_ERROR(topk_indices(x.to(DType::Float64), 2), "float32");
  Tensor nan = from_vector(std::vector<float>{1, NAN, 2}, {1, 3});
  EXPECT_EMBER_ERROR(topk_indices(nan, 1), "NaN");
}

// topk_indices on CUDA tensors goes through topk_indices_by_select (the select ops); on the CPU
// that composition must give exactly topk_row's answer, ties and magnitudes included.
TEST(SparsityTopk, SelectOpsCompositionMatchesTopkRow) {
  Generator g(77);
  std::vector<Tensor> xs = {random_f32({3, 1}, 70), random_f32({3, 7}, 71), random_f32({2, 4, 33}, 72),
                            random_f32({33, 6}, 73).t(), randint({4, 127}, -3, 4, &g).to(DType::Float32)};
  for (const Tensor& x : xs)
    for (bool mag : {false, true}) {
      int64_t n = x.size(-1);
      for (int64_t k : std::vector<int64_t>{0, 1, n / 2, n}) {
        Tensor got = topk_indices_by_select(x, k, mag);
        EXPECT_EQ(got.dtype(), DType::Int64);
        EXPECT_EQ(got.shape(), topk_indices(x, k, mag).shape());
        EXPECT_EQ(got.to_vector<int64_t>(), topk_indices(x, k, mag).to_vector<int64_t>())
            << to_string(x.shape()) << " k " << k << " magnitude " << mag;
      }
    }
  Tensor bad = from_vector(std::vector<float>{1, NAN, 2}, {1, 3});
  EXPECT_THROW(topk_indices_by_select(bad, 1), Error);
  EXPECT_THROW(topk_indices_by_select(random_f32({2, 3}, 74), 4), Error);
  EXPECT_THROW(topk_indices_by_select(from_vector(std::vector<double>{1, 2}), 1), Error);
}
