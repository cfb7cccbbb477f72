// DataParallel on 2 ranks: a few hundred steps of each rank on its half of every batch must end
// where one process training on the whole batches ends, within float32 rounding (the ranks sum
// the batch in two halves, one process in one go).
#include <gtest/gtest.h>

#include "ddp_fixture.h"
#include "ember.h"
#include "test_util.h"

using namespace ember;
using ember::testing::all_close;
namespace ddp = ember::testing::ddp;

namespace {

void expect_same_as_one_process(const dist::DataParallelOptions& o, const char* what) {
  dist::Communicator& c = dist::world();
  const int64_t steps = 300;
  std::vector<Tensor> ref = ddp::train(steps, nullptr, 11);
  // Each rank starts from its own initialisation: DataParallel must broadcast rank 0's (seed 11).
  std::vector<Tensor> got = ddp::train(steps, &c, 11 + uint64_t(c.rank()), o);
  ASSERT_EQ(got.size(), ref.size());
  for (size_t i = 0; i < ref.size(); ++i) {
    EXPECT_TRUE(all_close(got[i], ref[i], 2e-4, 2e-3)) << what << ", parameter " << i;
    // Identical on every rank, bit for bit: both ranks took the same steps from the same means.
    Tensor other = got[i].clone();
    c.broadcast(other, 1);
    EXPECT_TRUE(all_close(got[i], other, 0, 0)) << what << ", parameter " << i << " differs between ranks";
  }
}

TEST(DataParallelMpi, OverlappedSmallBucketsEqualOneProcess) { expect_same_as_one_process({256, true}, "overlap"); }
TEST(DataParallelMpi, OneBucketAfterBackwardEqualsOneProcess) { expect_same_as_one_process({1 << 20, false}, "after"); }

TEST(DataParallelMpi, BucketsStartDuringBackward) {
  dist::Communicator& c = dist::world();
  auto model = nn::make_mlp({ddp::kIn, ddp::kHidden, ddp::kHidden, ddp::kClasses});
  dist::DataParallel d(*model, c, {128, true});
  ASSERT_GT(d.num_buckets(), 2);
  data::Batch b = ddp::shard(ddp::global_batch(0), c.rank(), c.world_size());
  d.backward(cross_entropy((*model)(b.inputs), b.targets));
  // Every bucket starts inside backward, each as soon as its last gradient arrives (the first
  // layer's with the pass's last leaf); none waits for the pass to end.
  EXPECT_EQ(d.stats().buckets_started_early, d.num_buckets());
  EXPECT_GT(d.stats().bytes, 0);
}

TEST(DataParallelMpi, ParameterWithoutGradientOnOneRankGetsTheMean) {
  dist::Communicator& c = dist::world();
  Tensor used = ones({3}).requires_grad_();
  Tensor maybe = ones({2}).requires_grad_();
  dist::DataParallel d(std::vector<Tensor>{used, maybe}, c);
  Tensor loss = sum(used * 2.0);
  if (c.rank() == 0) loss = loss + sum(maybe * 4.0);  // rank 1 never touches `maybe`
  d.backward(loss);
  EXPECT_TRUE(all_close(used.grad(), full({3}, 2.0), 0, 0));
  EXPECT_TRUE(all_close(maybe.grad(), full({2}, 2.0), 0, 0));  // (4 + 0) / 2 on both ranks
}

TEST(DataParallelMpi, BroadcastParametersFromAnotherRoot) {
  dist::Communicator& c = dist::world();
  Tensor w = full({4}, double(c.rank()), DType::Float32).requires_grad_();
  dist::DataParallel d(std::vector<Tensor>{w}, c);
  EXPECT_TRUE(all_close(w.detach(), zeros({4}), 0, 0));  // rank 0's values, from the constructor
  w.detach().fill_(double(10 + c.rank()));
  d.broadcast_parameters(1);
  EXPECT_TRUE(all_close(w.detach(), full({4}, 11.0), 0, 0));
}

TEST(DataParallelMpi, DifferentModelsFailAtConstruction) {
  dist::Communicator& c = dist::world();
  auto model = nn::make_mlp({4, c.rank() == 0 ? 6 : 7, 2});
  EXPECT_EMBER_ERROR(dist::DataParallel(*model, c), "expected the same shape, dtype and device on every rank");
}

}  // namespace
