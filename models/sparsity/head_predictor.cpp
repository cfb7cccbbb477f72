#include "models/sparsity/head_predictor.h"

#include "framework/core/autograd/trace.h"
#include "models/sparsity/heads.h"
#include "models/sparsity/topk.h"

namespace ember::sparsity {

HeadPredictor::HeadPredictor(int64_t in, int64_t heads, int64_t rank, Generator& gen)
    : in_(in), heads_(heads), rank_(rank) {
  EMBER_CHECK(in > 0 && heads > 0 && rank >= 0, "HeadPredictor: expected a positive input width and head count and a "
              "rank >= 0 (0: linear), got in ", in, ", heads ", heads, ", rank ", rank);
  if (rank > 0) {
    nn::LinearOptions no_bias;
    no_bias.bias = false;
    down = register_module("down", std::make_shared<nn::Linear>(in, rank, gen, no_bias));
  }
  out = register_module("out", std::make_shared<nn::Linear>(rank > 0 ? rank : in, heads, gen));
}

Tensor HeadPredictor::forward(const Tensor& x) {
  EMBER_CHECK(x.defined() && x.dim() >= 1 && x.size(-1) == in_, "HeadPredictor: input must be (..., ", in_, "), got ",
              x.defined() ? to_string(x.shape()) : "undefined");
  return out->forward(down ? down->forward(x) : x);
}

std::string HeadPredictor::name() const {
  return rank_ > 0 ? str("HeadPredictor(", in_, " -> ", rank_, " -> ", heads_, ")")
                   : str("HeadPredictor(", in_, " -> ", heads_, ")");
}

Tensor HeadPredictor::predict_mask(const Tensor& x, int64_t k) {
  EMBER_CHECK(k >= 1 && k <= heads_, "HeadPredictor::predict_mask: k = ", k, " heads, expected 1 to ", heads_);
  autograd::NoGradGuard ng;
  return topk_mask(forward(x), k);
}

Tensor head_topk_targets(const Tensor& heads, int64_t k) {
  Tensor norms = head_norms(heads);  // checks the shape: (B, T, H)
  const int64_t H = norms.size(2);
  EMBER_CHECK(k >= 1 && k <= H, "head_topk_targets: k = ", k, " heads, expected 1 to ", H);
  return topk_mask(norms.reshape({-1, H}), k);
}

std::vector<double> train_head_predictor(HeadPredictor& model, const Tensor& inputs, const Tensor& targets,
                                         const PredictorTraining& opt, const StepReport& on_step) {
  return train_bce(model, model.in_features(), model.heads(), inputs, targets, opt, on_step, "train_head_predictor");
}

}  // namespace ember::sparsity
