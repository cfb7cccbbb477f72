#include "framework/train/dist/sharded_sampler.h"

#include <algorithm>

namespace ember::dist {

ShardedSampler::ShardedSampler(const data::DataLoader& global, int rank, int world)
    : global_(global), rank_(rank), world_(world) {
  EMBER_CHECK(world >= 1 && rank >= 0 && rank < world, "ShardedSampler: rank ", rank, " of ", world,
              " (expected 0 <= rank < world size)");
  EMBER_CHECK(global.options().batch_size >= world, "ShardedSampler: batch size ", global.options().batch_size,
              " is smaller than the world size ", world, " (expected at least one example per rank)");
}

std::vector<int64_t> ShardedSampler::indices(const std::vector<int64_t>& order, int64_t index) const {
  EMBER_CHECK(index >= 0 && index < num_batches(), "ShardedSampler: batch ", index, " out of range (", num_batches(),
              " batches)");
  const int64_t bs = global_.options().batch_size;
  const int64_t lo = index * bs, hi = std::min<int64_t>(lo + bs, int64_t(order.size()));
  const int64_t n = hi - lo;
  EMBER_CHECK(n >= world_, "ShardedSampler: batch ", index, " holds ", n, " examples for ", world_,
              " ranks (expected at least one per rank; use drop_last)");
  const int64_t a = lo + n * rank_ / world_, b = lo + n * (rank_ + 1) / world_;
  return std::vector<int64_t>(order.begin() + a, order.begin() + b);
}

data::Batch ShardedSampler::batch(const std::vector<int64_t>& order, int64_t index) const {
  return global_.dataset().get_batch(indices(order, index));
}

double ShardedSampler::loss_weight(const std::vector<int64_t>& order, int64_t index) const {
  const int64_t bs = global_.options().batch_size;
  const int64_t n = std::min<int64_t>((index + 1) * bs, int64_t(order.size())) - index * bs;
  return double(indices(order, index).size()) * world_ / double(n);
}

}  // namespace ember::dist
