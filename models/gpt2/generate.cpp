#include "models/gpt2/generate.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "framework/core/autograd/trace.h"
#include "ops/elementwise/elementwise.h"
#include "ops/matmul/matmul.h"
#include "ops/reduce/reduce.h"
#include "ops/select/select.h"

namespace ember::gpt2 {

namespace {

// Draws order[i] for i < nucleus with probability p[i] / (p[0] + ... + p[nucleus - 1]).
int64_t draw(const std::vector<double>& p, size_t nucleus, const std::vector<int64_t>& order, Generator& gen) {
  double mass = std::accumulate(p.begin(), p.begin() + long(nucleus), 0.0);
  double u = gen.uniform() * mass;
  for (size_t i = 0; i < nucleus; ++i) {
    u -= p[i];
    if (u < 0) return order[i];
  }
  return order[nucleus - 1];
}

// Logits on the GPU: the candidates are ordered there (topk for top-k, a full descending sort
// otherwise) and the nucleus is found there (cumsum of the probabilities, in float64), so only
// the tokens that can be drawn cross to the host, not the whole vocabulary.
int64_t sample_next_cuda(const Tensor& logits, const SamplingOptions& opt, Generator& gen) {
  Tensor z = logits.detach();
  if (opt.temperature == 0.0) return int64_t(argmax(z, 0).to(Device::CPU).item());
  int64_t vocab = z.numel(), keep = opt.top_k > 0 ? std::min(vocab, opt.top_k) : vocab;
  TopK cand = keep < vocab ? topk(z, keep) : sort(z, /*descending=*/true);
  int64_t nucleus = keep;
  if (opt.top_p < 1.0) {
    Tensor zc = cand.values.to(DType::Float64);
    Tensor p = exp((zc - zc.slice(0, 0, 1)) / opt.temperature);
    Tensor below = (cumsum(p, 0) / p.sum()).lt(opt.top_p);  // prefix still short of top_p
    nucleus = std::min(keep, int64_t(below.sum().to(Device::CPU).item()) + 1);
  }
  std::vector<double> zs = cand.values.slice(0, 0, nucleus).to(Device::CPU).to_vector<double>();
  std::vector<int64_t> order = cand.indices.slice(0, 0, nucleus).to(Device::CPU).to_vector<int64_t>();
  std::vector<double> p(zs.size());
  for (size_t i = 0; i < zs.size(); ++i) p[i] = std::exp((zs[i] - zs[0]) / opt.temperature);
  return draw(p, size_t(nucleus), order, gen);
}

}  // namespace

int64_t sample_next(const Tensor& logits, const SamplingOptions& opt, Generator& gen) {
  EMBER_CHECK(logits.dim() == 1 && logits.numel() > 0, "sample_next: expected one row of logits, got shape ",
              to_string(logits.shape()));
  EMBER_CHECK(opt.temperature >= 0 && opt.top_k >= 0 && opt.top_p > 0 && opt.top_p <= 1,
              "sample_next: temperature >= 0, top_k >= 0 and 0 < top_p <= 1 are required (got ", opt.temperature, ", ",
              opt.top_k, ", ", opt.top_p, ")");
  if (logits.device() == Device::CUDA) return sample_next_cuda(logits, opt, gen);
  std::vector<double> z = logits.to_vector<double>();
  if (opt.temperature == 0.0) return int64_t(std::max_element(z.begin(), z.end()) - z.begin());
  std::vector<int64_t> order(z.size());
  std::iota(order.begin(), order.end(), 0);
  size_t keep = opt.top_k > 0 ? std::min(order.size(), size_t(opt.top_k)) : order.size();
  // Only the kept tokens need ordering (top-p walks them from the most likely): with top-k this
  // sorts k entries instead of the whole vocabulary every step.
  std::partial_sort(order.begin(), order.begin() + long(keep), order.end(),
                    [&](int64_t a, int64_t b) { return z[size_t(a)] > z[size_t(b)]; });
  double zmax = z[size_t(order[0])];
  std::vector<double> p(keep);
  double total = 0;
  for (size_t i = 0; i < keep; ++i) total += p[i] = std::exp((z[size_t(order[i])] - zmax) / opt.temperature);
  // Nucleus: the shortest prefix of the sorted tokens whose probability reaches top_p.
  double acc = 0;
  size_t nucleus = keep;
  for (size_t i = 0; i < keep; ++i) {
    acc += p[i] / total;
    if (acc >= opt.top_p) {
      nucleus = i + 1;
      break;
    }
  }
  return draw(p, nucleus, order, gen);
}

std::vector<int64_t> generate(GPT2& model, const std::vector<int64_t>& prompt, const SamplingOptions& opt,
                              const std::function<void(int64_t)>& on_token) {
  EMBER_CHECK(!prompt.empty(), "generate: the prompt must hold at least one token");
  const Config& cfg = model.config();
  for (int64_t id : prompt)
    EMBER_CHECK(id >= 0 && id < cfg.vocab_size, "generate: prompt token ", id, " is outside the vocabulary [0, ",
                cfg.vocab_size, ")");
  EMBER_CHECK(opt.max_new_tokens >= 0, "generate: max_new_tokens is ", opt.max_new_tokens, ", expected >= 0");
  autograd::NoGradGuard no_grad;
  Generator gen(opt.seed);
  std::vector<int64_t> seq = prompt, out;
  int64_t budget = std::min<int64_t>(opt.max_new_tokens, cfg.n_positions - int64_t(prompt.size()));
  EMBER_CHECK(budget >= 0, "generate: the prompt (", prompt.size(), " tokens) is longer than the context (",
              cfg.n_positions, ")");
  std::unique_ptr<KVCache> cache;
  if (opt.use_cache) cache = std::make_unique<KVCache>(cfg, 1, int64_t(prompt.size()) + budget);
  Tensor next_input = from_vector(seq, {1, int64_t(seq.size())});
  for (int64_t step = 0; step < budget; ++step) {
    Tensor h = opt.use_cache ? model.hidden(next_input, cache.get()) : model.hidden(from_vector(seq, {1, int64_t(seq.size())}));
    // Only the last position is sampled, so the LM head (C x vocab, the largest matmul of a step)
    // runs on that row alone, as nanoGPT's generate does; forward() would run it on all T rows.
    Tensor last = model.lm_head(h.slice(1, h.size(1) - 1, h.size(1))).reshape({cfg.vocab_size});
    int64_t id = sample_next(last, opt, gen);
    seq.push_back(id);
    out.push_back(id);
    if (on_token) on_token(id);
    if (id == opt.stop_token) break;
    next_input = from_vector(std::vector<int64_t>{id}, {1, 1});
  }
  return out;
}

}  // namespace ember::gpt2
