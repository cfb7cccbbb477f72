// DataParallel on world size 1: the wrapper must not change training at all (bitwise).
#include "framework/train/dist/data_parallel.h"

#include <gtest/gtest.h>

#include "ember.h"
#include "ddp_fixture.h"
#include "test_util.h"

using namespace ember;
using ember::testing::all_close;
namespace ddp = ember::testing::ddp;

namespace {

TEST(DataParallelLocal, TrainsExactlyLikeOneProcess) {
  dist::Communicator c(dist::make_local_backend());
  std::vector<Tensor> ref = ddp::train(40, nullptr, 3);
  for (bool overlap : {true, false}) {
    std::vector<Tensor> got = ddp::train(40, &c, 3, {256, overlap});
    ASSERT_EQ(got.size(), ref.size());
    for (size_t i = 0; i < ref.size(); ++i) EXPECT_TRUE(all_close(got[i], ref[i], 0, 0)) << "parameter " << i;
  }
}

TEST(DataParallelLocal, BucketsFollowReverseOrderAndSize) {
  dist::Communicator c(dist::make_local_backend());
  auto model = nn::make_mlp({4, 8, 3});  // 0.weight 32, 0.bias 8, 2.weight 24, 2.bias 3 floats
  dist::DataParallel one(*model, c, {1 << 20, true});
  EXPECT_EQ(one.num_buckets(), 1);
  dist::DataParallel small(*model, c, {100, true});  // 25 floats a bucket
  EXPECT_EQ(small.num_buckets(), 4);
  EXPECT_EQ(small.bucket_of(3), 0);  // the last parameter's gradient comes first in backward
  EXPECT_EQ(small.bucket_of(0), 3);
  dist::DataParallel mid(*model, c, {140, true});  // 35 floats: {2.bias, 2.weight, 0.bias} fills one exactly
  EXPECT_EQ(mid.num_buckets(), 2);
  EXPECT_EQ(mid.bucket_of(1), mid.bucket_of(3));
  EXPECT_EQ(mid.bucket_of(0), 1);
}

TEST(DataParallelLocal, ClearErrors) {
  dist::Communicator c(dist::make_local_backend());
  EXPECT_EMBER_ERROR(dist::DataParallel(std::vector<Tensor>{}, c), "empty");
  EXPECT_EMBER_ERROR(dist::DataParallel(std::vector<Tensor>{randn({3})}, c), "does not require gradients");
  Tensor p = randn({3}).requires_grad_();
  EXPECT_EMBER_ERROR(dist::DataParallel(std::vector<Tensor>{p, p}, c), "listed twice");
  EXPECT_EMBER_ERROR(dist::DataParallel(std::vector<Tensor>{p}, c, {0, true}), "bucket_bytes");
}

TEST(DataParallelLocal, StatsCountSteps) {
  dist::Communicator c(dist::make_local_backend());
  Tensor w = randn({4}).requires_grad_();
  dist::DataParallel d(std::vector<Tensor>{w}, c);
  sum(w * w).backward();
  d.all_reduce_gradients();
  d.backward(sum(w * w));
  EXPECT_EQ(d.stats().steps, 2);
  EXPECT_TRUE(all_close(w.grad(), w.detach() * 4.0, 1e-6, 1e-6));  // two accumulated passes of 2w
  d.reset_stats();
  EXPECT_EQ(d.stats().steps, 0);
  EXPECT_EQ(&d.communicator(), &c);
}

}  // namespace
