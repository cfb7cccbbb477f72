// check_same_settings on one process (the 2-rank behaviour is in settings_check_mpitest.cpp and
// the mpi_settings_mismatch_* CTests) and the message naming the first difference.
#include "framework/train/dist/communicator.h"
#include "framework/train/dist/settings_check.h"
#include "test_util.h"

using namespace ember;

TEST(DistSettings, FirstDifferenceNamesTheSettingAndBothValues) {
  const nlohmann::ordered_json a = {{"--steps", 100}, {"--batch", 16}, {"--seed", 1}};
  nlohmann::ordered_json b = a;
  EXPECT_EQ(dist::first_difference(a, 0, b, 1), "");
  b["--batch"] = 32;
  b["--seed"] = 2;
  EXPECT_EQ(dist::first_difference(a, 0, b, 1), "--batch is 16 on rank 0 but 32 on rank 1");
  b = a;
  b.erase("--seed");
  EXPECT_EQ(dist::first_difference(a, 0, b, 3), "--seed is 1 on rank 0 but rank 3 has no such setting");
  EXPECT_EQ(dist::first_difference(b, 0, a, 3), "--seed is 1 on rank 3 but rank 0 has no such setting");
}

TEST(DistSettings, OneRankHasNothingToCompare) {
  dist::Communicator c(dist::make_local_backend());
  EXPECT_NO_THROW(dist::check_same_settings(c, {{"--seed", 1}}));
  EXPECT_EMBER_ERROR(dist::check_same_settings(c, nlohmann::ordered_json::array()), "must be a JSON object");
}
