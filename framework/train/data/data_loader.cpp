#include "framework/train/data/data_loader.h"

#include <algorithm>
#include <numeric>

namespace ember::data {

DataLoader::DataLoader(std::shared_ptr<const Dataset> data, DataLoaderOptions opt) : data_(std::move(data)), opt_(opt) {
  EMBER_CHECK(data_, "DataLoader: the dataset is null");
  EMBER_CHECK(opt.batch_size > 0, "DataLoader: batch_size must be positive, got ", opt.batch_size);
}

int64_t DataLoader::num_batches() const {
  int64_t n = data_->size(), b = opt_.batch_size;
  return opt_.drop_last ? n / b : (n + b - 1) / b;
}

std::vector<int64_t> DataLoader::order(int64_t epoch) const {
  if (!opt_.shuffle) {
    std::vector<int64_t> p(size_t(data_->size()));
    std::iota(p.begin(), p.end(), 0);
    return p;
  }
  // Decorrelate the epochs' seeds (splitmix64 of seed and epoch), so epoch e's order does not
  // depend on whether epochs 0..e-1 were iterated.
  Generator mix(opt_.seed ^ (0x9e3779b97f4a7c15ull * uint64_t(epoch + 1)));
  return permutation(data_->size(), mix.next_u64());
}

Batch DataLoader::batch(const std::vector<int64_t>& order, int64_t index) const {
  EMBER_CHECK(index >= 0 && index < num_batches(), "DataLoader: batch ", index, " out of range (", num_batches(),
              " batches)");
  int64_t lo = index * opt_.batch_size, hi = std::min<int64_t>(lo + opt_.batch_size, int64_t(order.size()));
  return data_->get_batch(std::vector<int64_t>(order.begin() + lo, order.begin() + hi));
}

DataLoader::Epoch DataLoader::epoch(int64_t e) const {
  return Epoch{this, std::make_shared<const std::vector<int64_t>>(order(e))};
}

}  // namespace ember::data
