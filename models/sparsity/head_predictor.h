// Deja Vu's attention-head predictor (Liu et al. 2023): per layer, a small scorer that reads the
// attention block's input x (the output of ln_1, before q, k, v are computed) and scores each of
// the H heads; the k highest scores are the heads a token computes. Trained like the neuron
// predictor (predictor.h): AdamW on binary cross-entropy against the oracle's top-k indicator,
// here the k heads with the largest output norm (heads.h).
#pragma once
#include <memory>

#include "framework/train/nn/linear.h"
#include "framework/train/nn/module.h"
#include "models/sparsity/predictor.h"

namespace ember::sparsity {

class HeadPredictor : public nn::Module {
 public:
  // rank 0: one linear map C -> H with a bias (C x H weights, 9216 at GPT-2's 768 x 12: already
  // small, so no factorisation is needed); rank r > 0: C -> r (no bias) -> H, as the neuron predictor.
  HeadPredictor(int64_t in, int64_t heads, int64_t rank, Generator& gen);
  Tensor forward(const Tensor& x) override;  // (..., C) -> scores (..., H)
  std::string name() const override;

  int64_t in_features() const { return in_; }
  int64_t heads() const { return heads_; }
  int64_t rank() const { return rank_; }

  // x (..., C) -> float32 0/1 (..., H): each token's k highest-scoring heads. For x (B, T, C) this
  // is the (B, T, H) mask apply_head_mask takes. Not recorded by autograd.
  Tensor predict_mask(const Tensor& x, int64_t k);

  std::shared_ptr<nn::Linear> down;  // C -> r without bias; null at rank 0
  std::shared_ptr<nn::Linear> out;   // r (or C) -> H, with a bias (each head's base rate)

 private:
  int64_t in_, heads_, rank_;
};

// The oracle's targets for one layer: head outputs (B, H, T, hd) -> float32 0/1 (B*T, H), one row
// per token (b major, then t, the order of x.reshape({-1, C})) with ones at its k heads of the
// largest output norm.
Tensor head_topk_targets(const Tensor& heads, int64_t k);

// Trains on inputs (M, C) and 0/1 targets (M, H) (train_bce); returns the mean loss of each epoch.
std::vector<double> train_head_predictor(HeadPredictor& model, const Tensor& inputs, const Tensor& targets,
                                         const PredictorTraining& opt, const StepReport& on_step = nullptr);

}  // namespace ember::sparsity
