// The KV cache: per layer, preallocated keys and values of shape (B, n_head, n_positions, head_dim).
// Prefill writes the prompt's keys and values in one pass; each generation step appends one
// position, so a step costs O(T) attention work per layer instead of recomputing the prefix.
#pragma once
#include <vector>

#include "framework/core/tensor.h"
#include "models/gpt2/config.h"

namespace ember::gpt2 {

class KVCache {
 public:
  KVCache(const Config& cfg, int64_t batch, int64_t capacity = -1, DType dtype = DType::Float32,
          Device device = Device::CPU);  // capacity defaults to n_positions

  int64_t length() const { return length_; }  // positions filled so far
  int64_t capacity() const { return capacity_; }
  int64_t bytes() const;                       // memory held by keys and values
  void reset() { length_ = 0; }

  // Writes k, v (B, H, T, hd) at positions [length, length + T) of `layer` and returns views of
  // every cached position [0, length + T). Call advance(T) once all layers have appended.
  std::pair<Tensor, Tensor> append(int64_t layer, const Tensor& k, const Tensor& v);
  void advance(int64_t t);

 private:
  std::vector<Tensor> keys_, values_;
  int64_t capacity_, length_ = 0;
};

}  // namespace ember::gpt2
