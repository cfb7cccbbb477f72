#include "framework/train/dist/sharded_sampler.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "ember.h"
#include "test_util.h"

using namespace ember;

namespace {

std::shared_ptr<data::TensorDataset> numbered(int64_t n) {
  Tensor x = arange(n, DType::Float32).reshape({n, 1});
  return std::make_shared<data::TensorDataset>(x, arange(n));
}

TEST(ShardedSampler, RanksPartitionEveryGlobalBatch) {
  auto ds = numbered(105);
  data::DataLoader loader(ds, {10, true, false, 7});
  for (int world : {1, 2, 3, 4}) {
    std::vector<dist::ShardedSampler> ranks;
    for (int r = 0; r < world; ++r) ranks.emplace_back(loader, r, world);
    std::vector<int64_t> order = loader.order(2);
    for (int64_t b = 0; b < loader.num_batches(); ++b) {
      std::vector<int64_t> joined;
      double weights = 0;
      for (const auto& s : ranks) {
        std::vector<int64_t> part = s.indices(order, b);
        joined.insert(joined.end(), part.begin(), part.end());
        weights += s.loss_weight(order, b) / world;
        EXPECT_EQ(s.batch(order, b).targets.to_vector<int64_t>(), part);
      }
      const int64_t lo = b * 10, hi = std::min<int64_t>(lo + 10, 105);
      EXPECT_EQ(joined, std::vector<int64_t>(order.begin() + lo, order.begin() + hi)) << "world " << world << " batch " << b;
      EXPECT_NEAR(weights, 1.0, 1e-12);
    }
    EXPECT_EQ(ranks[0].num_batches(), loader.num_batches());  // steps per epoch: the same on any world size
  }
}

TEST(ShardedSampler, EvenSplitHasWeightOne) {
  auto ds = numbered(64);
  data::DataLoader loader(ds, {16, true, true, 1});
  dist::ShardedSampler s(loader, 1, 4);
  std::vector<int64_t> order = loader.order(0);
  EXPECT_EQ(s.indices(order, 2), std::vector<int64_t>(order.begin() + 36, order.begin() + 40));
  EXPECT_DOUBLE_EQ(s.loss_weight(order, 2), 1.0);
  EXPECT_EQ(s.rank(), 1);
  EXPECT_EQ(s.world_size(), 4);
}

TEST(ShardedSampler, ClearErrors) {
  auto ds = numbered(21);
  data::DataLoader loader(ds, {4, false, false, 0});
  EXPECT_EMBER_ERROR(dist::ShardedSampler(loader, 2, 2), "expected 0 <= rank < world size");
  EXPECT_EMBER_ERROR(dist::ShardedSampler(loader, 0, 5), "smaller than the world size");
  dist::ShardedSampler s(loader, 0, 3);
  std::vector<int64_t> order = loader.order(0);
  EXPECT_EMBER_ERROR(s.indices(order, 5), "holds 1 examples for 3 ranks");  // the last, short batch
  EXPECT_EMBER_ERROR(s.indices(order, 6), "out of range");
}

}  // namespace
