#include "models/sparsity/predictor.h"

#include "framework/autograd/trace.h"
#include "framework/data/dataset.h"
#include "framework/optim/adam.h"
#include "ops/elementwise/elementwise.h"
#include "ops/reduce/reduce.h"

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

Tensor bce_with_logits(const Tensor& logits, const Tensor& targets) {
  EMBER_CHECK(logits.defined() && targets.defined() && logits.shape() == targets.shape(), "bce_with_logits: logits ",
              logits.defined() ? to_string(logits.shape()) : "undefined", " and targets ",
              targets.defined() ? to_string(targets.shape()) : "undefined", " must have the same shape");
  Tensor per = relu(logits) - logits * targets + log(exp(-abs(logits)) + 1.0);
  return mean(per);
}

std::vector<double> train_predictor(SparsityPredictor& model, const Tensor& inputs, const Tensor& targets,
                                    const PredictorTraining& opt,
                                    const std::function<void(int64_t, int64_t, double)>& on_step) {
  EMBER_CHECK(inputs.dim() == 2 && targets.dim() == 2 && inputs.size(0) == targets.size(0) &&
                  inputs.size(1) == model.down->in_features && targets.size(1) == model.up->out_features,
              "train_predictor: inputs ", to_string(inputs.shape()), " and targets ", to_string(targets.shape()),
              " must be (M, ", model.down->in_features, ") and (M, ", model.up->out_features, ")");
  EMBER_CHECK(opt.epochs > 0 && opt.batch > 0 && inputs.size(0) > 0, "train_predictor: epochs, batch and the number of "
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
