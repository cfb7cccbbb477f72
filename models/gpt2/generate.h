// Text generation: greedy, temperature, top-k and top-p sampling, with or without the KV cache.
#pragma once
#include <cstdint>
#include <functional>
#include <vector>

#include "models/gpt2/model.h"

namespace ember::gpt2 {

struct SamplingOptions {
  int64_t max_new_tokens = 32;
  double temperature = 0.0;  // 0: greedy (argmax)
  int64_t top_k = 0;         // keep the k most likely tokens (0: all)
  double top_p = 1.0;        // keep the smallest set whose probability reaches p (1: all)
  uint64_t seed = 0;
  bool use_cache = true;     // false recomputes the whole prefix every step
  int64_t stop_token = -1;   // stop after emitting this id (e.g. end-of-text); -1: never
};

// The next token from one row of logits (vocab,). CUDA logits are ranked on the GPU (ops/select:
// topk for top-k, sort + cumsum for top-p) and only the candidates that can be drawn are copied
// back; the draw itself is the same as for CPU logits (one uniform number from gen).
int64_t sample_next(const Tensor& logits, const SamplingOptions& opt, Generator& gen);

// Continues `prompt`; calls on_token for each new id as it is produced. Returns the new ids.
std::vector<int64_t> generate(GPT2& model, const std::vector<int64_t>& prompt, const SamplingOptions& opt,
                              const std::function<void(int64_t)>& on_token = nullptr);

}  // namespace ember::gpt2
