// gpt2 train's step under bf16 autocast (gpt2 train --precision bf16): a few AdamW steps of a
// small GPT on random batches give finite losses within a few percent of the float32 run's, and
// the weights, their gradients and the optimizer's state stay float32.
#include <cmath>

#include "framework/core/random.h"
#include "framework/train/optim/adam.h"
#include "framework/train/optim/clip_grad.h"
#include "models/gpt2/model.h"
#include "test_util.h"

using namespace ember;
using namespace ember::gpt2;

namespace {

std::vector<double> train_losses(bool bf16, int steps) {
  Config cfg;
  cfg.n_layer = 2;
  cfg.n_head = 2;
  cfg.n_embd = 64;
  cfg.vocab_size = 257;
  cfg.n_positions = 32;
  GPT2 model(cfg, 3);
  optim::AdamOptions ao;
  ao.lr = 3e-3;
  ao.weight_decay = 0.1;
  optim::AdamW opt(model.parameters(), ao);
  Generator gen(7);
  // A fixed batch, so that the loss falls far enough in a few steps for a drift to show.
  Tensor tokens = randint({4, 33}, 0, 64, &gen);
  Tensor x = tokens.narrow(1, 0, 32).contiguous(), y = tokens.narrow(1, 1, 32).contiguous();
  std::vector<double> losses;
  for (int s = 0; s < steps; ++s) {
    Tensor loss;
    {
      autocast::Guard amp(DType::BFloat16, bf16);
      loss = lm_loss(model.forward(x), y);
    }
    EXPECT_EQ(loss.dtype(), DType::Float32);
    loss.backward();
    for (const Tensor& p : model.parameters()) {
      EXPECT_EQ(p.dtype(), DType::Float32);
      EXPECT_EQ(p.grad().dtype(), DType::Float32);
    }
    optim::clip_grad_norm(model.parameters(), 1.0);
    opt.step();
    opt.zero_grad();
    losses.push_back(loss.item());
  }
  for (const Tensor& p : model.parameters()) EXPECT_EQ(p.dtype(), DType::Float32);
  return losses;
}

}  // namespace

TEST(Gpt2Autocast, Bf16StepsTrackFloat32) {
  const int steps = 8;
  const std::vector<double> f32 = train_losses(false, steps), bf16 = train_losses(true, steps);
  for (int s = 0; s < steps; ++s) {
    ASSERT_TRUE(std::isfinite(bf16[size_t(s)])) << "step " << s;
    EXPECT_NEAR(bf16[size_t(s)], f32[size_t(s)], 0.03 * f32[size_t(s)]) << "step " << s;
  }
  EXPECT_NE(bf16[0], f32[0]);                 // the forward pass did run in bf16
  EXPECT_LT(bf16.back(), bf16.front() - 0.5);  // and it learns the batch
}
