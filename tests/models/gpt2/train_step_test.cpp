// gpt2 train's step (forward, loss, backward, clipping to norm 1, AdamW, zero_grad) computes what
// it computed before the training fast paths (the batched matmul folded into one GEMM, the fused
// GELU backward, the one-pass gradient norm, contiguous attention heads): the losses of six steps
// on one batch, where each step's loss depends on all the gradients before it, against the values
// the implementation before them gave (`gpt2 train-step --layers 2 --heads 2 --embd 64 --context
// 32 --batch 4 --lr 1e-2 --fixed-batch --steps 6 --warmup 0 --losses`, one thread), within float
// rounding. Also: every step's loss is finite and the loss falls.
#include <cmath>

#include "framework/core/random.h"
#include "framework/train/optim/adam.h"
#include "framework/train/optim/clip_grad.h"
#include "models/gpt2/model.h"
#include "test_util.h"

using namespace ember;
using namespace ember::gpt2;

TEST(Gpt2TrainStep, LossesMatchTheImplementationBeforeTheFastPaths) {
  const std::vector<double> before = {5.58628273, 5.08106232, 5.08346319, 4.63476515, 4.31894779, 3.92300081};
  Config cfg;
  cfg.n_layer = 2;
  cfg.n_head = 2;
  cfg.n_embd = 64;
  cfg.vocab_size = 257;
  cfg.n_positions = 32;
  GPT2 model(cfg, 0);
  optim::AdamOptions ao;
  ao.lr = 1e-2;
  ao.weight_decay = 0.1;
  optim::AdamW opt(model.parameters(), ao);
  Generator gen(1);
  Tensor tokens = randint({4, 33}, 0, 257, &gen);
  Tensor x = tokens.narrow(1, 0, 32).contiguous(), y = tokens.narrow(1, 1, 32).contiguous();
  std::vector<double> got;
  for (size_t s = 0; s < before.size(); ++s) {
    Tensor loss = lm_loss(model.forward(x), y);
    loss.backward();
    optim::clip_grad_norm(model.parameters(), 1.0);
    opt.step();
    opt.zero_grad();
    const double l = loss.item();
    ASSERT_TRUE(std::isfinite(l)) << "step " << s;
    got.push_back(l);
    EXPECT_NEAR(l, before[s], 2e-5 * before[s]) << "step " << s;
  }
  EXPECT_LT(got.back(), got.front() - 1.0);  // it learns the batch
}
