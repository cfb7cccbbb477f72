#include "step_ceiling.h"

#include <algorithm>
#include <chrono>

#include "examples/common/bandwidth.h"
#include "framework/core/error.h"
#include "framework/core/autograd/trace.h"
#include "framework/core/random.h"
#include "ops/matmul/matmul.h"

namespace ember::gpt2 {
namespace {

// The three products of a linear layer y = x W^T (x: rows x in, W: out x in), as the linear op's
// forward and VJP run them: x W^T (W read transposed), dY W, and dY^T x (dY read transposed).
void add_linear(std::vector<StepGemm>& g, const std::string& what, int64_t rows, int64_t in, int64_t out, double count) {
  g.push_back({what + " forward", rows, out, in, false, true, count, 1});
  g.push_back({what + " dX", rows, in, out, false, false, count, 1});
  g.push_back({what + " dW", out, in, rows, true, false, count, 1});
}

}  // namespace

std::vector<StepGemm> step_gemms(const Config& cfg, int64_t batch, int64_t context) {
  const int64_t rows = batch * context, C = cfg.n_embd, T = context, hd = cfg.head_dim();
  const double layers = double(cfg.n_layer);
  const int64_t heads = batch * cfg.n_head;
  std::vector<StepGemm> g;
  add_linear(g, "attn.c_attn", rows, C, 3 * C, layers);
  add_linear(g, "attn.c_proj", rows, C, C, layers);
  add_linear(g, "mlp.c_fc", rows, C, 4 * C, layers);
  add_linear(g, "mlp.c_proj", rows, 4 * C, C, layers);
  add_linear(g, "lm_head (tied wte)", rows, C, cfg.vocab_size, 1);
  // Per head: S = Q K^T and O = P V forward; S again, dV = P^T dO, dP = dO V^T, dQ = dS K and
  // dK = dS^T Q backward. The causal mask leaves half of each T x T product to compute.
  const double causal = 0.5 * layers;
  g.push_back({"attention Q K^T (fwd, bwd)", T, T, hd, false, true, 2 * causal, heads});
  g.push_back({"attention P V (fwd)", T, hd, T, false, false, causal, heads});
  g.push_back({"attention P^T dO, dS^T Q (bwd)", T, hd, T, true, false, 2 * causal, heads});
  g.push_back({"attention dO V^T (bwd)", T, T, hd, false, true, causal, heads});
  g.push_back({"attention dS K (bwd)", T, hd, T, false, false, causal, heads});
  return g;
}

void time_gemms(std::vector<StepGemm>& gemms, int repeats) {
  EMBER_CHECK(repeats >= 1, "time_gemms: expected at least one timed repeat, got ", repeats);
  autograd::NoGradGuard ng;
  using clock = std::chrono::steady_clock;
  for (StepGemm& s : gemms) {
    Tensor a = s.a_transposed ? randn({s.batch, s.k, s.m}).transpose(1, 2) : randn({s.batch, s.m, s.k});
    Tensor b = s.b_transposed ? randn({s.batch, s.n, s.k}).transpose(1, 2) : randn({s.batch, s.k, s.n});
    if (s.batch == 1) a = a.squeeze(0), b = b.squeeze(0);
    matmul(a, b);  // warm-up: page faults, packing buffers
    std::vector<double> t;
    for (int i = 0; i < repeats; ++i) {
      const auto t0 = clock::now();
      matmul(a, b);
      t.push_back(std::chrono::duration<double, std::milli>(clock::now() - t0).count());
    }
    std::nth_element(t.begin(), t.begin() + long(t.size() / 2), t.end());
    s.ms = t[t.size() / 2];
  }
}

double step_other_bytes(const Config& cfg, int64_t batch, int64_t context) {
  const double rows = double(batch * context), C = double(cfg.n_embd), V = double(cfg.vocab_size);
  // Activations of one block, in units of rows x C floats: ln_1 (1), qkv (3), contiguous q, k, v
  // (3), attention output (1), heads merged (1), c_proj (1), residual (1), ln_2 (1), c_fc (4),
  // GELU (4), mlp c_proj (1), residual (1); then the embeddings' sum and ln_f (2) once.
  const double units = 22.0 * double(cfg.n_layer) + 2.0;
  const double activations = 3.0 * units * rows * C * 4.0 + 3.0 * rows * V * 4.0;
  const double params = double(cfg.n_layer) * (12.0 * C * C + 13.0 * C) + V * C + double(context) * C + 2.0 * C;
  return activations + 8.0 * params * 4.0;
}

Ceiling step_ceiling(const Config& cfg, int64_t batch, int64_t context, int repeats, std::vector<StepGemm>* out) {
  std::vector<StepGemm> gemms = step_gemms(cfg, batch, context);
  time_gemms(gemms, repeats);
  Ceiling c;
  for (const StepGemm& s : gemms) {
    c.gemm_ms += s.ms * s.count;
    c.gemm_gflop += s.flops() * 1e-9;
  }
  c.other_mb = step_other_bytes(cfg, batch, context) * 1e-6;
  c.copy_gbs = bench::measure_bandwidth(size_t(64) << 20).copy_gbs();
  c.other_ms = c.other_mb / c.copy_gbs;  // MB / (GB/s) = ms
  if (out) *out = gemms;
  return c;
}

}  // namespace ember::gpt2
