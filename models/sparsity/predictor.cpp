#include "models/sparsity/predictor.h"

#include <algorithm>

#include "framework/core/autograd/trace.h"
#include "framework/train/data/dataset.h"
#include "framework/train/optim/adam.h"
#include "ops/elementwise/elementwise.h"
#include "ops/reduce/reduce.h"
#include "models/sparsity/vector_kernels.h"

namespace ember::sparsity {

SparsityPredictor::SparsityPredictor(int64_t in, int64_t rank, int64_t out, Generator& gen) {
  EMBER_CHECK(in > 0 && rank > 0 && out > 0, "SparsityPredictor: sizes must be positive, got in ", in, ", rank ",
              rank, ", out ", out);
  nn::LinearOptions no_bias;
  no_bias.bias = false;
  down = register_module("down", std::make_shared<nn::Linear>(in, rank, gen, no_bias));
  up = register_module("up", std::make_shared<nn::Linear>(rank, out, gen));
}

Tensor SparsityPredictor::forward(const Tensor& x) { return up->forward(down->forward(x)); }

std::string SparsityPredictor::name() const {
  return str("SparsityPredictor(", down->in_features, " -> ", down->out_features, " -> ", up->out_features, ")");
}

PredictorScorer::PredictorScorer(const SparsityPredictor& p)
    : C_(p.down->in_features), r_(p.down->out_features), N_(p.up->out_features) {
  down_ = p.down->weight.detach().contiguous().to_vector<float>();
  std::vector<float> up = p.up->weight.detach().contiguous().to_vector<float>();  // (N, r)
  up_t_.resize(static_cast<size_t>(r_ * N_));
  for (int64_t j = 0; j < N_; ++j)
    for (int64_t i = 0; i < r_; ++i) up_t_[size_t(i * N_ + j)] = up[size_t(j * r_ + i)];
  bias_ = p.up->bias.detach().contiguous().to_vector<float>();
}

Tensor PredictorScorer::scores(const Tensor& x) const {
  EMBER_CHECK(x.defined() && x.dim() == 2 && x.size(1) == C_ && x.dtype() == DType::Float32,
              "PredictorScorer::scores: input must be float32 (B, ", C_, "), got ",
              x.defined() ? str(x.dtype(), to_string(x.shape())) : "undefined");
  check_cpu(x, "PredictorScorer::scores");
  Tensor xc = x.detach().contiguous();
  const int64_t B = x.size(0);
  const float* xp = xc.data<float>();
  Tensor out = empty({B, N_}, DType::Float32);
  float* o = out.data<float>();
  std::vector<float> h(static_cast<size_t>(B * r_));
  for (int64_t i = 0; i < r_; ++i) {
    std::vector<float> col(static_cast<size_t>(B));
    dot_tokens(down_.data() + i * C_, xp, B, C_, col.data());
    for (int64_t b = 0; b < B; ++b) h[size_t(b * r_ + i)] = col[size_t(b)];
  }
  for (int64_t b = 0; b < B; ++b) {
    float* ob = o + b * N_;
    std::copy(bias_.begin(), bias_.end(), ob);
    for (int64_t i = 0; i < r_; ++i) axpy(h[size_t(b * r_ + i)], up_t_.data() + i * N_, ob, N_);
  }
  return out;
}

Tensor bce_with_logits(const Tensor& logits, const Tensor& targets) {
  EMBER_CHECK(logits.defined() && targets.defined() && logits.shape() == targets.shape(), "bce_with_logits: logits ",
              logits.defined() ? to_string(logits.shape()) : "undefined", " and targets ",
              targets.defined() ? to_string(targets.shape()) : "undefined", " must have the same shape");
  Tensor per = relu(logits) - logits * targets + log(exp(-abs(logits)) + 1.0);
  return mean(per);
}

std::vector<double> train_predictor(SparsityPredictor& model, const Tensor& inputs, const Tensor& targets,
                                    const PredictorTraining& opt, const StepReport& on_step) {
  return train_bce(model, model.down->in_features, model.up->out_features, inputs, targets, opt, on_step,
                   "train_predictor");
}

std::vector<double> train_bce(nn::Module& model, int64_t in, int64_t out, const Tensor& inputs, const Tensor& targets,
                              const PredictorTraining& opt, const StepReport& on_step, const char* who) {
  EMBER_CHECK(inputs.defined() && targets.defined() && inputs.dim() == 2 && targets.dim() == 2 &&
                  inputs.size(0) == targets.size(0) && inputs.size(1) == in && targets.size(1) == out,
              who, ": inputs ", inputs.defined() ? to_string(inputs.shape()) : "undefined", " and targets ",
              targets.defined() ? to_string(targets.shape()) : "undefined", " must be (M, ", in, ") and (M, ", out, ")");
  EMBER_CHECK(opt.epochs > 0 && opt.batch > 0 && inputs.size(0) > 0, who, ": epochs, batch and the number of "
              "examples must be positive");
  data::TensorDataset ds(inputs.detach().contiguous(), targets.detach().contiguous());
  optim::AdamOptions ao;
  ao.lr = opt.lr;
  ao.weight_decay = opt.weight_decay;
  optim::AdamW adam(model.parameters(), ao);
  const int64_t M = inputs.size(0), steps_per_epoch = (M + opt.batch - 1) / opt.batch;
  std::vector<double> epoch_loss;
  int64_t step = 0;
  for (int64_t e = 0; e < opt.epochs; ++e) {
    std::vector<int64_t> order = data::permutation(M, opt.seed * 1000003 + uint64_t(e));
    double sum = 0;
    for (int64_t s = 0; s < steps_per_epoch; ++s) {
      int64_t b0 = s * opt.batch, b1 = std::min(M, b0 + opt.batch);
      data::Batch b = ds.get_batch(std::vector<int64_t>(order.begin() + b0, order.begin() + b1));
      Tensor loss = bce_with_logits(model.forward(b.inputs), b.targets);
      adam.zero_grad();
      loss.backward();
      adam.step();
      double l = loss.item();
      sum += l * double(b1 - b0);
      if (on_step) on_step(++step, opt.epochs * steps_per_epoch, l);
    }
    epoch_loss.push_back(sum / double(M));
  }
  return epoch_loss;
}

}  // namespace ember::sparsity
