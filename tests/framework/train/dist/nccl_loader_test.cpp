// dist's side of the NCCL backend: asking whether NCCL is built opens nothing; the id travels by
// a broadcast; a CPU-only process maps neither libember_nccl.so nor the CUDA backend.
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "ember.h"
#include "test_util.h"

using namespace ember;

namespace {

TEST(DistNcclLoaderDeathTest, AskingWhetherNcclIsBuiltOpensNothing) {
  // In a child process of its own, so that no earlier test has opened anything.
  ::testing::FLAGS_gtest_death_test_style = "threadsafe";
  EXPECT_EXIT(
      {
        // ember_tests links libember_cuda.so itself in a CUDA build (its CUDA tests call kernels
        // directly), so what must not change is whether CUDA is mapped, not that it is not.
        const bool cuda_before = dist::cuda_loaded();
        const bool built = dist::nccl_built();
        (void)built;
        std::_Exit(dist::nccl_loaded() ? 1 : (!cuda_before && dist::cuda_loaded()) ? 2 : 0);
      },
      ::testing::ExitedWithCode(0), "");
}

TEST(DistNcclLoader, NotBuiltWhereThePathHoldsNothing) {
  const char* was = std::getenv("EMBER_NCCL_BACKEND");
  const std::string saved = was ? was : "";
  setenv("EMBER_NCCL_BACKEND", "/nonexistent/libember_nccl.so", 1);
  EXPECT_FALSE(dist::nccl_built());
  if (was) setenv("EMBER_NCCL_BACKEND", saved.c_str(), 1);
  else unsetenv("EMBER_NCCL_BACKEND");
#ifdef EMBER_HAS_NCCL
  EXPECT_TRUE(dist::nccl_built());
#else
  EXPECT_FALSE(dist::nccl_built());
  EXPECT_EMBER_ERROR(dist::make_nccl_backend(0, 2, dist::ShareBytes()), "built without NCCL");
#endif
}

TEST(DistNcclLoader, CudaLoadedFollowsTheCudaBackend) {
  if (!cuda::built_with_cuda()) {
    cuda_available();
    EXPECT_FALSE(dist::cuda_loaded());
  } else if (cuda_available()) {
    EXPECT_TRUE(dist::cuda_loaded());
  }
}

TEST(DistNcclLoader, ShareByBroadcastHandsOutRootsBytes) {
  // World size 1: the local backend's broadcast keeps rank 0's bytes; sizes that are not whole
  // int64s are padded and cut back (the MPI tests check 2 ranks).
  auto local = dist::make_local_backend();
  dist::ShareBytes share = dist::share_by_broadcast(*local);
  std::mt19937 g(5);
  for (size_t n : {size_t(128), size_t(13), size_t(1)}) {
    std::vector<uint8_t> bytes(n + 4, 0xee), want;
    for (size_t i = 0; i < n; ++i) bytes[i] = uint8_t(g());
    want = bytes;
    share(bytes.data(), n);
    EXPECT_EQ(bytes, want) << n;  // including the 4 guard bytes after the n
  }
}

}  // namespace
