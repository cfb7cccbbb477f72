// Datasets of (input, target) examples that a DataLoader gathers into batches. A dataset hands
// out whole batches for a list of indices, so that gathering is one copy per row, not per element.
#pragma once
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "framework/core/tensor.h"

namespace ember::data {

struct Batch {
  Tensor inputs;   // (B, ...) rows of the dataset's inputs
  Tensor targets;  // (B, ...) rows of its targets
};

class Dataset {
 public:
  virtual ~Dataset() = default;
  virtual int64_t size() const = 0;
  // The examples at `indices` (each in [0, size())), stacked in that order.
  virtual Batch get_batch(const std::vector<int64_t>& indices) const = 0;
};

// Examples as rows of two tensors with the same first dimension.
class TensorDataset : public Dataset {
 public:
  TensorDataset(Tensor inputs, Tensor targets);
  int64_t size() const override { return inputs_.size(0); }
  Batch get_batch(const std::vector<int64_t>& indices) const override;
  const Tensor& inputs() const { return inputs_; }
  const Tensor& targets() const { return targets_; }

 private:
  Tensor inputs_, targets_;  // contiguous, on the CPU, not traced
};

// A view of some examples of another dataset, by index.
class Subset : public Dataset {
 public:
  Subset(std::shared_ptr<const Dataset> base, std::vector<int64_t> indices);
  int64_t size() const override { return int64_t(indices_.size()); }
  Batch get_batch(const std::vector<int64_t>& indices) const override;
  const std::vector<int64_t>& indices() const { return indices_; }

 private:
  std::shared_ptr<const Dataset> base_;
  std::vector<int64_t> indices_;
};

// Splits a dataset at random (seeded) into two disjoint subsets of `first_size` and the rest
// examples, e.g. training and validation.
std::pair<std::shared_ptr<Subset>, std::shared_ptr<Subset>> random_split(std::shared_ptr<const Dataset> data,
                                                                          int64_t first_size, uint64_t seed);

// A permutation of [0, n) from Fisher-Yates shuffling with a Generator of the given seed.
std::vector<int64_t> permutation(int64_t n, uint64_t seed);

}  // namespace ember::data
