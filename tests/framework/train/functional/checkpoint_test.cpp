// checkpoint (framework/train/functional/checkpoint.h): the same gradients as the plain function, at
// first and second order and in forward mode, with only the inputs kept between forward and
// backward; the recomputation reuses the forward's random draws; captured tracked tensors are
// refused.
#include "framework/train/functional/checkpoint.h"

#include <memory>

#include "test_util.h"

using namespace ember;
using namespace ember::testing;

namespace {

// A small block with several inputs and several intermediates: tanh(x W1) W2 * sigmoid(x).
Tensor block(const std::vector<Tensor>& in) {
  Tensor h = tanh(matmul(in[0], in[1]));
  return matmul(h, in[2]) * sigmoid(in[0]);
}

std::vector<Tensor> block_inputs(uint64_t seed) {
  return {random({3, 4}, seed).to(DType::Float64), random({4, 5}, seed + 1).to(DType::Float64),
          random({5, 4}, seed + 2).to(DType::Float64)};
}

}  // namespace

TEST(Checkpoint, GradientsMatchThePlainFunctionAndFiniteDifferences) {
  std::vector<Tensor> xs = block_inputs(1);
  auto plain = [](const std::vector<Tensor>& in) { return sum(block(in) * block(in)); };
  auto ckpt = [](const std::vector<Tensor>& in) {
    Tensor y = checkpoint(FnN(block), in);
    return sum(y * y);
  };
  EXPECT_TRUE(grad_ok(ckpt, xs));  // against central differences
  auto [v1, g1] = value_and_grads(plain)(xs);
  auto [v2, g2] = value_and_grads(ckpt)(xs);
  EXPECT_TRUE(all_close(v1, v2, 1e-12, 1e-12));
  for (size_t i = 0; i < xs.size(); ++i) EXPECT_TRUE(all_close(g1[i], g2[i], 1e-12, 1e-10)) << "input " << i;
}

TEST(Checkpoint, KeepsOnlyItsInputsAndRecomputesInBackward) {
  int calls = 0;
  std::weak_ptr<Storage> hidden;  // the tanh activation inside the block
  auto f = [&](const std::vector<Tensor>& in) {
    ++calls;
    Tensor h = tanh(matmul(in[0], in[1]));
    if (calls == 1) hidden = h.impl()->storage;
    return sum(h * h);
  };
  Tensor x = random({8, 16}, 5).requires_grad_(), w = random({16, 32}, 6).requires_grad_();
  Tensor loss = checkpoint(f, {x, w});
  EXPECT_TRUE(hidden.expired()) << "the activation inside a checkpoint must not outlive the forward";
  EXPECT_EQ(calls, 1);
  loss.backward();
  EXPECT_EQ(calls, 2);  // recomputed once, in backward
  Tensor x2 = x.detach().clone().requires_grad_(), w2 = w.detach().clone().requires_grad_();
  calls = 0;
  Tensor plain = f({x2, w2});
  EXPECT_FALSE(hidden.expired()) << "without the checkpoint the activation is saved (the test would prove nothing)";
  plain.backward();
  EXPECT_TRUE(all_close(x.grad(), x2.grad(), 1e-5, 1e-5));
  EXPECT_TRUE(all_close(w.grad(), w2.grad(), 1e-5, 1e-5));
}

TEST(Checkpoint, SecondOrderAndForwardMode) {
  auto f = [](const Tensor& x) { return sum(sin(x) * exp(x * 0.5)); };
  auto fc = [&](const Tensor& x) { return checkpoint(Fn1(f), x); };
  Tensor x = random({5}, 7).to(DType::Float64);
  Tensor v = random({5}, 8).to(DType::Float64);
  // Hessian-vector product both ways: forward over reverse, through the checkpoint.
  auto [g1, hv1] = make_jvp(grad(f), x, v);
  auto [g2, hv2] = make_jvp(grad(fc), x, v);
  EXPECT_TRUE(all_close(g1, g2, 1e-12, 1e-12));
  EXPECT_TRUE(all_close(hv1, hv2, 1e-12, 1e-10));
  // Reverse over reverse.
  Tensor h1 = grad([&](const Tensor& y) { return sum(grad(f)(y) * v); })(x);
  Tensor h2 = grad([&](const Tensor& y) { return sum(grad(fc)(y) * v); })(x);
  EXPECT_TRUE(all_close(h1, h2, 1e-12, 1e-10));
  // Forward mode straight through the checkpoint.
  auto [y1, t1] = make_jvp(Fn1(f), x, v);
  auto [y2, t2] = make_jvp(Fn1(fc), x, v);
  EXPECT_TRUE(all_close(t1, t2, 1e-12, 1e-10));
}

TEST(Checkpoint, TheRecomputationDrawsTheSameDropoutMask) {
  auto f = [](const Tensor& x) { return sum(dropout(x, 0.5) * x); };
  Tensor x = random({64}, 9, true).to(DType::Float64);
  manual_seed(42);
  Tensor g_plain = grad(f)(x);
  manual_seed(42);
  Tensor g_ckpt = grad([&](const Tensor& y) { return checkpoint(Fn1(f), y); })(x);
  EXPECT_TRUE(all_close(g_plain, g_ckpt, 1e-12, 1e-12));
  int dropped = 0;
  for (double g : g_plain.to_vector<double>()) dropped += g == 0.0;
  EXPECT_GT(dropped, 5);  // the mask dropped something, so a different mask would show
}

TEST(Checkpoint, EagerReplayFillsTheGradientsOfCapturedParameters) {
  // A module-like block: its weights are captured, the batch is not tracked at all.
  Tensor w1 = random({6, 8}, 20).requires_grad_(), w2 = random({8, 3}, 21).requires_grad_();
  Tensor x = random({5, 6}, 22);
  auto f = [&](const Tensor& in) { return matmul(gelu(matmul(in, w1)), w2); };
  Tensor loss = sum(checkpoint(Fn1(f), x) * checkpoint(Fn1(f), x * 0.5));  // two uses: the grads add up
  loss.backward();
  Tensor g1 = w1.grad(), g2 = w2.grad();
  w1.zero_grad();
  w2.zero_grad();
  sum(f(x) * f(x * 0.5)).backward();
  EXPECT_TRUE(all_close(g1, w1.grad(), 1e-5, 1e-5));
  EXPECT_TRUE(all_close(g2, w2.grad(), 1e-5, 1e-5));
  // A backward under no_grad cannot replay: an error, not zero gradients.
  Tensor again = sum(checkpoint(Fn1(f), x));
  {
    autograd::NoGradGuard no_grad;
    EXPECT_EMBER_ERROR(again.backward(), "backward() ran with gradients disabled");
  }
  // Nothing tracked anywhere: a plain call, not a tracked result.
  EXPECT_FALSE(checkpoint([](const Tensor& in) { return in * 2.0; }, x).is_traced());
}

TEST(Checkpoint, RefusesCapturedTracedValuesAndBadArguments) {
  Tensor w = random({4, 4}, 10).to(DType::Float64);
  Tensor x = random({2, 4}, 11).to(DType::Float64);
  // Under make_vjp over (x, w), a checkpoint of x alone that captures w is refused.
  EXPECT_EMBER_ERROR(grad(FnN([](const std::vector<Tensor>& in) {
                       const Tensor wt = in[1];
                       return sum(checkpoint(FnN([wt](const std::vector<Tensor>& a) { return matmul(a[0], wt); }), {in[0]}));
                     }), 1)({x, w}),
                     "not among its 1 inputs");
  // Inside make_vjp with untracked inputs, a captured traced value falls back to a plain call.
  Tensor g = grad([&](const Tensor& wt) { return sum(checkpoint([wt](const Tensor& a) { return matmul(a, wt); }, x)); })(w);
  EXPECT_TRUE(all_close(g, grad([&](const Tensor& wt) { return sum(matmul(x, wt)); })(w)));
  EXPECT_EMBER_ERROR(checkpoint(FnN(), {x}), "checkpoint: the function is empty");
  EXPECT_EMBER_ERROR(checkpoint(FnN(block), {x, Tensor()}), "checkpoint: input 1 is undefined");
}

// Under autocast the replay in backward runs under the forward's autocast setting (the engine
// suspends autocast in backward), so a checkpointed bf16 block gives the same gradients, bit for
// bit, as the plain one, with and without backward() inside the scope.
TEST(Checkpoint, ReplaysUnderTheForwardsAutocast) {
  const std::vector<Tensor> xs = {random({3, 4}, 31).to(DType::Float32), random({4, 5}, 32).to(DType::Float32),
                                  random({5, 4}, 33).to(DType::Float32)};
  auto grads = [&](bool ckpt, bool backward_inside, bool amp_on = true) {
    std::vector<Tensor> leaves;
    for (const Tensor& x : xs) leaves.push_back(x.clone().requires_grad_());
    Tensor loss;
    {
      autocast::Guard amp(DType::BFloat16, amp_on);
      Tensor y = ckpt ? checkpoint(FnN(block), leaves) : block(leaves);
      EXPECT_EQ(y.dtype(), DType::Float32);  // the bf16 product times the float32 gate promotes
      loss = sum(y * y);
      if (backward_inside) loss.backward();
    }
    if (!backward_inside) loss.backward();
    std::vector<Tensor> g;
    for (const Tensor& l : leaves) g.push_back(l.grad());
    return g;
  };
  const std::vector<Tensor> plain = grads(false, false), f32 = grads(false, false, /*amp_on=*/false);
  EXPECT_NE(plain[1].to_vector<double>(), f32[1].to_vector<double>());  // the block did run in bf16
  for (bool inside : {false, true}) {
    const std::vector<Tensor> ck = grads(true, inside);
    for (size_t i = 0; i < xs.size(); ++i) {
      EXPECT_EQ(ck[i].dtype(), DType::Float32);
      EXPECT_EQ(ck[i].to_vector<double>(), plain[i].to_vector<double>()) << "input " << i << (inside ? " inside" : "");
    }
  }
}
