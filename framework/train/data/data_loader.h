// DataLoader: batches of a dataset, in order or shuffled. The order of epoch e depends only on
// (seed, e), so runs repeat exactly and a run resumed at epoch e sees the batches it would have seen.
//
//   DataLoader loader(train, {.batch_size = 128, .shuffle = true, .seed = 1});
//   for (int64_t e = 0; e < epochs; ++e)
//     for (const Batch& b : loader.epoch(e)) { ... }
#pragma once
#include <memory>
#include <vector>

#include "framework/train/data/dataset.h"

namespace ember::data {

struct DataLoaderOptions {
  int64_t batch_size = 64;
  bool shuffle = false;
  bool drop_last = false;  // drop the last batch when it would be smaller than batch_size
  uint64_t seed = 0;
};

class DataLoader {
 public:
  DataLoader(std::shared_ptr<const Dataset> data, DataLoaderOptions opt);

  int64_t num_batches() const;  // per epoch
  const DataLoaderOptions& options() const { return opt_; }
  const Dataset& dataset() const { return *data_; }
  std::vector<int64_t> order(int64_t epoch) const;  // the example order of an epoch
  Batch batch(const std::vector<int64_t>& order, int64_t index) const;  // batch `index` of that order

  class Iterator {
   public:
    Iterator(const DataLoader* loader, std::shared_ptr<const std::vector<int64_t>> order, int64_t index)
        : loader_(loader), order_(std::move(order)), index_(index) {}
    Batch operator*() const { return loader_->batch(*order_, index_); }
    Iterator& operator++() { ++index_; return *this; }
    bool operator!=(const Iterator& o) const { return index_ != o.index_; }

   private:
    const DataLoader* loader_;
    std::shared_ptr<const std::vector<int64_t>> order_;
    int64_t index_;
  };
  struct Epoch {
    Iterator begin() const { return Iterator(loader, order, 0); }
    Iterator end() const { return Iterator(loader, order, loader->num_batches()); }
    const DataLoader* loader;
    std::shared_ptr<const std::vector<int64_t>> order;
  };
  Epoch epoch(int64_t e) const;

 private:
  std::shared_ptr<const Dataset> data_;
  DataLoaderOptions opt_;
};

}  // namespace ember::data
