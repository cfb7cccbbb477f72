// A Deja Vu-style sparsity predictor (Liu et al. 2023): a small low-rank network per layer that
// reads the layer's input x (C) and scores each of the N hidden units, z = (x A) B + b with
// A (C x r), B (r x N), r << C. Trained with Ember's autograd and AdamW on binary cross-entropy
// against the oracle's top-k indicator; at inference its k highest scores are the kept units.
#pragma once
#include <functional>
#include <memory>
#include <vector>

#include "framework/train/nn/linear.h"
#include "framework/train/nn/module.h"

namespace ember::sparsity {

class SparsityPredictor : public nn::Module {
 public:
  SparsityPredictor(int64_t in, int64_t rank, int64_t out, Generator& gen);
  Tensor forward(const Tensor& x) override;  // (..., in) -> scores (..., out)
  std::string name() const override;
  std::shared_ptr<nn::Linear> down;  // C -> r, no bias (a pure low-rank factor)
  std::shared_ptr<nn::Linear> up;    // r -> N, with a bias (it can learn each unit's base rate)
};

// The trained predictor's scores for inference, with matrix-vector loops instead of Ember's ops
// (whose packed GEMM copies a whole weight panel even for one token): h = x A (r dot products of
// length C), then z = b + sum_i h_i B[i, :] (r vector updates of length N). A copy of the weights
// at construction; later training does not reach it.
class PredictorScorer {
 public:
  explicit PredictorScorer(const SparsityPredictor& p);
  Tensor scores(const Tensor& x) const;  // float32 (B, C) -> (B, N)

 private:
  int64_t C_, r_, N_;
  std::vector<float> down_, up_t_, bias_;  // down (r, C) as nn::Linear stores it, up transposed (r, N)
};

// Mean binary cross-entropy between sigmoid(logits) and 0/1 targets, from Ember's differentiable
// ops in the stable form max(z, 0) - z y + log(1 + exp(-|z|)).
Tensor bce_with_logits(const Tensor& logits, const Tensor& targets);

struct PredictorTraining {
  int64_t epochs = 4;
  int64_t batch = 256;
  double lr = 3e-3;
  double weight_decay = 0.0;
  uint64_t seed = 0;
};

using StepReport = std::function<void(int64_t step, int64_t total_steps, double loss)>;

// Trains on inputs (M, C) and 0/1 targets (M, N), shuffled mini-batches; returns the mean loss
// of each epoch. `on_step(step, total_steps, loss)` reports progress when given.
std::vector<double> train_predictor(SparsityPredictor& model, const Tensor& inputs, const Tensor& targets,
                                    const PredictorTraining& opt, const StepReport& on_step = nullptr);

// The loop behind train_predictor (and the head predictor's): any module whose forward maps
// (M, in) to scores (M, out), AdamW on bce_with_logits. `who` names the caller in errors.
std::vector<double> train_bce(nn::Module& model, int64_t in, int64_t out, const Tensor& inputs, const Tensor& targets,
                              const PredictorTraining& opt, const StepReport& on_step = nullptr,
                              const char* who = "train_bce");

}  // namespace ember::sparsity
