// ShardedSampler: each rank's part of a DataLoader's batches. The loader's batch is the job's
// global batch and its order depends only on (seed, epoch), so every rank computes the same
// order without talking to the others and takes its own contiguous slice of each batch. The
// steps per epoch do not depend on the world size, which is what lets a checkpoint resume on
// another number of ranks.
#pragma once
#include <vector>

#include "framework/train/data/data_loader.h"

namespace ember::dist {

class ShardedSampler {
 public:
  // `global` must outlive the sampler; every global batch must hold at least `world` examples.
  ShardedSampler(const data::DataLoader& global, int rank, int world);

  int64_t num_batches() const { return global_.num_batches(); }
  int rank() const { return rank_; }
  int world_size() const { return world_; }

  // The dataset indices of this rank's part of global batch `index` of `order` (an order from
  // global.order(epoch)); the parts of all ranks, in rank order, are the global batch. Sizes
  // differ by at most one when the batch does not divide evenly.
  std::vector<int64_t> indices(const std::vector<int64_t>& order, int64_t index) const;
  data::Batch batch(const std::vector<int64_t>& order, int64_t index) const;
  // local size * world / global size: scaling a rank's mean loss by it makes the mean over ranks
  // of the gradients the gradient of the global batch's mean loss (1 when the batch divides evenly).
  double loss_weight(const std::vector<int64_t>& order, int64_t index) const;

 private:
  const data::DataLoader& global_;
  int rank_, world_;
};

}  // namespace ember::dist
