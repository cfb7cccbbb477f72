// dist::init() from a launcher's environment without mpirun. Each case runs in a child process
// of its own (init() makes one communicator per process), which sets the variables, calls init()
// and exits with 3 and the error on stderr.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <utility>
#include <vector>

#include "ember.h"

using namespace ember;

namespace {

void init_with(const std::vector<std::pair<const char*, const char*>>& env, dist::InitOptions o = {}) {
  for (const auto& [k, v] : env) setenv(k, v, 1);
  try {
    dist::init(o);
  } catch (const Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    std::fflush(stderr);
    std::_Exit(3);
  }
  std::_Exit(0);
}

class DistInitDeathTest : public ::testing::Test {
 protected:
  void SetUp() override { ::testing::FLAGS_gtest_death_test_style = "threadsafe"; }
};

TEST_F(DistInitDeathTest, SeveralRanksWithoutMpirunOrFileSaysWhatToDo) {
  EXPECT_EXIT(init_with({{"WORLD_SIZE", "2"}, {"RANK", "0"}}), ::testing::ExitedWithCode(3),
              "not started by mpirun. Expected `mpirun -np 2 <program>`.*RANK=<0..1> and EMBER_RENDEZVOUS_FILE=");
}

TEST_F(DistInitDeathTest, RendezvousNeedsARankBelowTheWorldSize) {
  EXPECT_EXIT(init_with({{"WORLD_SIZE", "2"}, {"EMBER_RENDEZVOUS_FILE", "/tmp/x"}}), ::testing::ExitedWithCode(3),
              "RANK is not");
  EXPECT_EXIT(init_with({{"WORLD_SIZE", "2"}, {"RANK", "2"}, {"EMBER_RENDEZVOUS_FILE", "/tmp/x"}}),
              ::testing::ExitedWithCode(3), "RANK=2, expected less than WORLD_SIZE=2");
}

TEST_F(DistInitDeathTest, RendezvousStartsNcclOnly) {
  const std::vector<std::pair<const char*, const char*>> env = {
      {"WORLD_SIZE", "2"}, {"RANK", "1"}, {"EMBER_RENDEZVOUS_FILE", "/tmp/x"}};
  EXPECT_EXIT(init_with(env, {"auto", "none"}), ::testing::ExitedWithCode(3), "for CUDA tensors only.*mpirun -np 2");
  // Without NCCL (EMBER_NCCL_BACKEND pointing nowhere stands for a build without it).
  auto no_nccl = env;
  no_nccl.push_back({"EMBER_NCCL_BACKEND", "/nonexistent/libember_nccl.so"});
  EXPECT_EXIT(init_with(no_nccl), ::testing::ExitedWithCode(3), "built without NCCL.*mpirun -np 2 <program>");
}

TEST_F(DistInitDeathTest, LocalIgnoresTheEnvironment) {
  EXPECT_EXIT(init_with({{"WORLD_SIZE", "2"}}, {"local", "auto"}), ::testing::ExitedWithCode(0), "");
}

}  // namespace
