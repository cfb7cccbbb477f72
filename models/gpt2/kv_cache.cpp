#include "models/gpt2/kv_cache.h"

#include "ops/shape/shape_ops.h"

namespace ember::gpt2 {

KVCache::KVCache(const Config& cfg, int64_t batch, int64_t capacity, DType dtype, Device device)
    : capacity_(capacity < 0 ? cfg.n_positions : capacity) {
  EMBER_CHECK(batch > 0 && capacity_ > 0, "KVCache: batch ", batch, " and capacity ", capacity_, " must be positive");
  for (int64_t l = 0; l < cfg.n_layer; ++l) {
    keys_.push_back(empty({batch, cfg.n_head, capacity_, cfg.head_dim()}, dtype, device));
    values_.push_back(empty({batch, cfg.n_head, capacity_, cfg.head_dim()}, dtype, device));
  }
}

int64_t KVCache::bytes() const {
  int64_t b = 0;
  for (size_t l = 0; l < keys_.size(); ++l)
    b += (keys_[l].numel() + values_[l].numel()) * int64_t(itemsize(keys_[l].dtype()));
  return b;
}

std::pair<Tensor, Tensor> KVCache::append(int64_t layer, const Tensor& k, const Tensor& v) {
  EMBER_CHECK(layer >= 0 && layer < int64_t(keys_.size()), "KVCache: layer ", layer, " out of range [0, ", keys_.size(), ")");
  const Tensor& K = keys_[size_t(layer)];
  const Tensor& V = values_[size_t(layer)];
  EMBER_CHECK(k.dim() == 4 && k.shape() == v.shape() && k.size(0) == K.size(0) && k.size(1) == K.size(1) &&
                  k.size(3) == K.size(3),
              "KVCache: keys/values of shape ", to_string(k.shape()), " / ", to_string(v.shape()),
              " do not fit a cache of shape ", to_string(K.shape()));
  int64_t t = k.size(2);
  EMBER_CHECK(length_ + t <= capacity_, "KVCache: ", length_, " cached + ", t, " new positions exceed the capacity ",
              capacity_, " (the model's context length)");
  copy_strided(K.slice(2, length_, length_ + t), k.detach().to(K.dtype()));
  copy_strided(V.slice(2, length_, length_ + t), v.detach().to(V.dtype()));
  return {K.slice(2, 0, length_ + t), V.slice(2, 0, length_ + t)};
}

void KVCache::advance(int64_t t) { length_ += t; }

}  // namespace ember::gpt2
