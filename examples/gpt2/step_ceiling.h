// The honest ceiling of a GPT training step on this CPU: its matrix products timed one by one with
// the library's own matmul at the step's exact shapes and layouts, plus the bytes that everything
// else must move at the machine's copy bandwidth. A step can be no faster than this without a
// faster GEMM; `gpt2 train-step --ceiling` prints it beside the measured step.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "models/gpt2/config.h"

namespace ember::gpt2 {

// One kind of product of the step: `batch` products C (m x n) = A (m x k) B (k x n) in one call
// (attention's heads: one batched matmul), `count` calls per step, with A or B read through a
// transposed view as the step reads it (x W^T, dY^T x).
struct StepGemm {
  std::string what;
  int64_t m = 0, n = 0, k = 0;
  bool a_transposed = false, b_transposed = false;
  double count = 0;   // calls per step; causal attention's count half (half of its tiles run)
  int64_t batch = 1;  // products per call
  double ms = 0;      // one call's median time, filled by time_gemms
  double flops_per_call() const { return 2.0 * double(batch) * double(m) * double(n) * double(k); }
  double flops() const { return flops_per_call() * count; }
};

// Every matrix product of one training step of `cfg` on `batch` sequences of `context` tokens:
// for each linear layer (and the tied LM head) its forward, input-gradient and weight-gradient
// products; for attention, per head, the forward's two and the backward's five (S recomputed).
std::vector<StepGemm> step_gemms(const Config& cfg, int64_t batch, int64_t context);

// Times each product alone on random operands (warm-up, then the median of `repeats`).
void time_gemms(std::vector<StepGemm>& gemms, int repeats);

// The bytes that the step's other work reads and writes at least once: each activation the
// forward writes is read by the backward, which writes its gradient (three passes over the saved
// activations), the logits and their gradient, and clipping and AdamW over the parameters (grad
// read twice, parameter, both moments read and written).
double step_other_bytes(const Config& cfg, int64_t batch, int64_t context);

struct Ceiling {
  double gemm_ms = 0, gemm_gflop = 0, other_mb = 0, copy_gbs = 0, other_ms = 0;
  double step_ms() const { return gemm_ms + other_ms; }
};

// The ceiling at the current thread count (measures the copy bandwidth too; a few seconds).
Ceiling step_ceiling(const Config& cfg, int64_t batch, int64_t context, int repeats, std::vector<StepGemm>* gemms);

}  // namespace ember::gpt2
