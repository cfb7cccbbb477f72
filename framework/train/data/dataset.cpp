#include "framework/train/data/dataset.h"

#include <cstring>
#include <numeric>

namespace ember::data {

namespace {
// Copies rows `indices` of a contiguous tensor into a new (B, ...) tensor.
Tensor gather_rows(const Tensor& t, const std::vector<int64_t>& indices) {
  Shape shape = t.shape();
  shape[0] = int64_t(indices.size());
  Tensor out = empty(shape, t.dtype());
  int64_t n = t.size(0);
  size_t row = size_t(t.numel() / std::max<int64_t>(n, 1)) * itemsize(t.dtype());
  const char* src = static_cast<const char*>(t.raw_data());
  char* dst = static_cast<char*>(out.raw_data());
  for (size_t i = 0; i < indices.size(); ++i) {
    int64_t k = indices[i];
    EMBER_CHECK(k >= 0 && k < n, "dataset: index ", k, " out of range for ", n, " examples");
    std::memcpy(dst + i * row, src + size_t(k) * row, row);
  }
  return out;
}
}  // namespace

TensorDataset::TensorDataset(Tensor inputs, Tensor targets) {
  EMBER_CHECK(inputs.defined() && targets.defined(), "TensorDataset: inputs and targets must be defined");
  EMBER_CHECK(inputs.dim() >= 1 && targets.dim() >= 1, "TensorDataset: inputs and targets need a first (example) dimension");
  EMBER_CHECK(inputs.size(0) == targets.size(0), "TensorDataset: inputs have ", inputs.size(0), " rows but targets have ",
              targets.size(0));
  inputs_ = inputs.detach().to(Device::CPU).contiguous();
  targets_ = targets.detach().to(Device::CPU).contiguous();
}

Batch TensorDataset::get_batch(const std::vector<int64_t>& indices) const {
  return {gather_rows(inputs_, indices), gather_rows(targets_, indices)};
}

Subset::Subset(std::shared_ptr<const Dataset> base, std::vector<int64_t> indices)
    : base_(std::move(base)), indices_(std::move(indices)) {
  EMBER_CHECK(base_, "Subset: the base dataset is null");
  for (int64_t k : indices_)
    EMBER_CHECK(k >= 0 && k < base_->size(), "Subset: index ", k, " out of range for ", base_->size(), " examples");
}

Batch Subset::get_batch(const std::vector<int64_t>& indices) const {
  std::vector<int64_t> mapped(indices.size());
  for (size_t i = 0; i < indices.size(); ++i) {
    EMBER_CHECK(indices[i] >= 0 && indices[i] < size(), "Subset: index ", indices[i], " out of range for ", size(), " examples");
    mapped[i] = indices_[size_t(indices[i])];
  }
  return base_->get_batch(mapped);
}

std::vector<int64_t> permutation(int64_t n, uint64_t seed) {
  std::vector<int64_t> p(size_t(std::max<int64_t>(n, 0)));
  std::iota(p.begin(), p.end(), 0);
  Generator g(seed);
  for (int64_t i = n - 1; i > 0; --i) {
    int64_t j = int64_t(g.next_u64() % uint64_t(i + 1));
    std::swap(p[size_t(i)], p[size_t(j)]);
  }
  return p;
}

std::pair<std::shared_ptr<Subset>, std::shared_ptr<Subset>> random_split(std::shared_ptr<const Dataset> data,
                                                                          int64_t first_size, uint64_t seed) {
  EMBER_CHECK(data, "random_split: the dataset is null");
  EMBER_CHECK(first_size >= 0 && first_size <= data->size(), "random_split: first_size ", first_size,
              " out of range for ", data->size(), " examples");
  std::vector<int64_t> p = permutation(data->size(), seed);
  std::vector<int64_t> a(p.begin(), p.begin() + first_size), b(p.begin() + first_size, p.end());
  return {std::make_shared<Subset>(data, std::move(a)), std::make_shared<Subset>(std::move(data), std::move(b))};
}

}  // namespace ember::data
