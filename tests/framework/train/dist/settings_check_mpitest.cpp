// check_same_settings on 2 ranks: equal settings pass; a difference raises the same error on
// both ranks, naming the first differing setting and both values, also when the two ranks'
// settings have different lengths (the second exchange pads them to one size).
#include <gtest/gtest.h>

#include <cmath>

#include "ember.h"
#include "framework/train/dist/settings_check.h"
#include "test_util.h"

using namespace ember;

namespace {
nlohmann::ordered_json settings(int64_t batch, uint64_t seed, double lr) {
  return {{"--epochs", 3}, {"--batch-size", batch}, {"--seed", seed}, {"--lr", lr}, {"--optimizer", "adamw"}};
}
}  // namespace

TEST(DistSettings, EqualSettingsPass) {
  EXPECT_NO_THROW(dist::check_same_settings(dist::world(), settings(64, 7, 1e-3)));
}

TEST(DistSettings, EveryRankNamesTheFirstDifference) {
  const int r = dist::world().rank();
  EXPECT_EMBER_ERROR(dist::check_same_settings(dist::world(), settings(r == 0 ? 64 : 1024, r == 0 ? 7 : 8, 1e-3)),
                     "the ranks were started with different settings: --batch-size is 64 on rank 0 but 1024 on rank 1");
  EXPECT_EMBER_ERROR(dist::check_same_settings(dist::world(), settings(64, 7, r == 0 ? 1e-3 : std::nextafter(1e-3, 1.0))),
                     "--lr is 0.001 on rank 0 but 0.0010000000000000002 on rank 1");
  // The communicator still works afterwards: both ranks took the same path through the check.
  Tensor t = from_vector(std::vector<double>{double(r + 1)});
  dist::world().all_reduce(t);
  EXPECT_EQ(t.item(), 3.0);
}
