#include "framework/train/io/checkpoint.h"

#include <unistd.h>

#include <cstdio>

#include "framework/train/data/data_loader.h"
#include "framework/train/nn/mlp.h"
#include "framework/train/optim/adam.h"
#include "framework/train/optim/sgd.h"
#include "ops/loss/cross_entropy.h"
#include "test_util.h"

using namespace ember;
using namespace ember::testing;

namespace {

std::string temp_path(const std::string& name) {
  return "/tmp/ember_ckpt_test_" + std::to_string(::getpid()) + "_" + name;
}

struct TrainingRun {
  std::shared_ptr<nn::Sequential> model;
  std::unique_ptr<optim::Optimizer> opt;
  explicit TrainingRun(bool sgd = false) {
    nn::MLPOptions o;
    o.seed = 5;
    model = nn::make_mlp({4, 8, 3}, o);
    if (sgd) opt = std::make_unique<optim::SGD>(model->parameters(), optim::SGDOptions{0.1, 0.9});
    else opt = std::make_unique<optim::AdamW>(model->parameters(), optim::adamw_defaults());
  }
};

// A small seeded classification problem, trained for epochs [from, to).
std::shared_ptr<data::TensorDataset> toy_data() {
  Generator g(8);
  Tensor x = randn({48, 4}, DType::Float32, &g);
  Tensor y = argmax(matmul(x, randn({4, 3}, DType::Float32, &g)), 1);
  return std::make_shared<data::TensorDataset>(x, y);
}

void train(TrainingRun& r, const data::DataLoader& loader, int64_t from, int64_t to) {
  for (int64_t e = from; e < to; ++e)
    for (const data::Batch& b : loader.epoch(e)) {
      Tensor loss = cross_entropy((*r.model)(b.inputs), b.targets);
      r.opt->zero_grad();
      loss.backward();
      r.opt->step();
    }
}

}  // namespace

TEST(Checkpoint, ResumedTrainingMatchesUninterruptedTrainingExactly) {
  auto ds = toy_data();
  data::DataLoader loader(ds, {8, true, false, 1});
  TrainingRun straight, first;
  train(straight, loader, 0, 4);

  train(first, loader, 0, 2);
  std::string path = temp_path("resume.safetensors");
  io::save_checkpoint(path, *first.model, *first.opt, first.opt->steps(), {{"epoch", "2"}});

  TrainingRun resumed;  // fresh model and optimizer, as in a new process
  io::CheckpointInfo info = io::load_checkpoint(path, *resumed.model, *resumed.opt);
  EXPECT_EQ(info.step, 12);
  EXPECT_EQ(info.metadata.at("epoch"), "2");
  EXPECT_EQ(resumed.opt->steps(), 12);
  train(resumed, loader, 2, 4);

  NamedTensors a = straight.model->state_dict(), b = resumed.model->state_dict();
  for (size_t i = 0; i < a.size(); ++i) EXPECT_TRUE(all_close(a[i].second, b[i].second, 0, 0)) << a[i].first;
  std::remove(path.c_str());
}

TEST(Checkpoint, MismatchesAreReportedAndLeaveEverythingUnchanged) {
  TrainingRun r;
  std::string path = temp_path("mismatch.safetensors");
  io::save_checkpoint(path, *r.model, *r.opt, 0);

  TrainingRun sgd(true);
  EXPECT_EMBER_ERROR(io::load_checkpoint(path, *sgd.model, *sgd.opt), "written by optimizer 'adamw' but this optimizer is 'sgd'");

  // A model of another shape: the error names the parameter, and neither the model nor the
  // optimizer changes.
  nn::MLPOptions o;
  auto other = nn::make_mlp({4, 9, 3}, o);
  optim::AdamW opt(other->parameters(), optim::adamw_defaults());
  Tensor before = other->parameters()[0].detach().clone();
  EXPECT_EMBER_ERROR(io::load_checkpoint(path, *other, opt), "parameter '0.weight' has shape [9, 4] in the model but [8, 4]");
  EXPECT_TRUE(all_close(other->parameters()[0].detach(), before, 0, 0));
  EXPECT_EQ(opt.steps(), 0);

  // The model matches but the optimizer does not (it covers one parameter fewer): the model is
  // loaded first and must be put back when the optimizer refuses.
  TrainingRun same;
  std::vector<Tensor> fewer = same.model->parameters();
  fewer.pop_back();
  optim::AdamW short_opt(fewer, optim::adamw_defaults());
  Tensor w0 = same.model->parameters()[0];
  Tensor(w0).detach().fill_(0.5);
  EXPECT_EMBER_ERROR(io::load_checkpoint(path, *same.model, short_opt), "does not keep");
  EXPECT_TRUE(all_close(w0.detach(), full_like(w0.detach(), 0.5), 0, 0));

  // The metadata says one step count and the optimizer's state another: refused before loading.
  io::save_checkpoint(path, *r.model, *r.opt, 7);
  EXPECT_EMBER_ERROR(io::load_checkpoint(path, *r.model, *r.opt),
                     "metadata 'step' is 7 but the optimizer's state says 0");

  // Not a checkpoint at all: a plain model file.
  io::save_module(path, *r.model);
  EXPECT_EMBER_ERROR(io::load_checkpoint(path, *r.model, *r.opt), "metadata 'format' is missing");
  std::remove(path.c_str());
}
