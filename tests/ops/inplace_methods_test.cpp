// Tensor's in-place arithmetic (ops/inplace_methods.cpp) and the saved-tensor check it feeds: a
// backward that would read a tensor overwritten since the forward fails with an ember::Error.
#include "test_util.h"

using namespace ember;
using namespace ember::testing;

TEST(InplaceMethods, MatchTheOutOfPlaceOps) {
  Tensor a = random({3, 4}, 1), b = random({3, 4}, 2, true), row = random({4}, 3, true);
  Tensor x = a.clone();
  EXPECT_TRUE(all_close(x.add_(b), a + b));
  x = a.clone();
  EXPECT_TRUE(all_close(x.add_(row, -0.5), a + row * -0.5));  // broadcast, with alpha
  x = a.clone();
  EXPECT_TRUE(all_close(x.sub_(b), a - b));
  x = a.clone();
  EXPECT_TRUE(all_close(x.mul_(row), a * row));
  x = a.clone();
  EXPECT_TRUE(all_close(x.div_(b), a / b));
  x = a.clone();
  EXPECT_TRUE(all_close(x.add_(1.25).mul_(3.0).div_(2.0), (a + 1.25) * 3.0 / 2.0));  // chained
  x = a.clone();
  EXPECT_TRUE(all_close(x.clamp_(-0.3, 0.4), clamp(a, -0.3, 0.4)));
  EXPECT_GT(max(x).item(), 0.39);  // something was clamped at each end (the input is standard normal)
  EXPECT_LT(min(x).item(), -0.29);
}

TEST(InplaceMethods, WriteThroughViewsAndKeepTheDtype) {
  Tensor base = random({4, 5}, 4).to(DType::Float32);
  Tensor expect = base.clone();
  Tensor col = base.slice(1, 1, 3);  // a strided view
  Tensor other = random({4, 2}, 5, true);  // float64: cast to the destination's float32
  col.mul_(other);
  EXPECT_EQ(col.dtype(), DType::Float32);
  for (int64_t i = 0; i < 4; ++i)
    for (int64_t j = 0; j < 5; ++j) {
      double want = expect.at({i, j}) * (j == 1 || j == 2 ? other.at({i, j - 1}) : 1.0);
      EXPECT_NEAR(base.at({i, j}), want, 1e-6) << i << "," << j;
    }
  Tensor t = random({3, 4}, 6);
  Tensor tt = t.t();  // transposed view: the update lands on the right elements
  Tensor before = t.clone();
  tt.add_(random({4, 3}, 7));
  EXPECT_TRUE(all_close(t, before + random({4, 3}, 7).t()));
}

TEST(InplaceMethods, RejectBadOperands) {
  Tensor x = random({3, 4}, 8);
  EXPECT_EMBER_ERROR(x.add_(random({2, 3, 4}, 9)), "does not broadcast to this tensor's shape [3, 4]");
  EXPECT_EMBER_ERROR(x.mul_(random({3, 5}, 9)), "mul_");
  EXPECT_EMBER_ERROR(x.sub_(Tensor()), "sub_: the other operand is undefined");
  Tensor u;
  EXPECT_EMBER_ERROR(u.add_(1.0), "add_: the tensor is undefined");
}

TEST(InplaceMethods, RefusedOnTrackedTensorsWhileRecordingAllowedUnderNoGrad) {
  Tensor w = random({3}, 10).requires_grad_();
  EXPECT_EMBER_ERROR(w.mul_(2.0), "mul_: cannot modify a leaf that requires grad");
  Tensor y = w * w;
  EXPECT_EMBER_ERROR(y.add_(1.0), "the result of the recorded op 'mul'");
  // Inside a traced function too: x.mul_(2) there would make the gradient 4x instead of 8x.
  EXPECT_EMBER_ERROR(grad([](const Tensor& x) {
                       Tensor v = x;
                       v.mul_(2.0);
                       return sum(v * v);
                     })(random({3}, 11)),
                     "mul_: cannot modify input 0 of the function being differentiated");
  Tensor before = w.detach().clone();
  {
    autograd::NoGradGuard no_grad;  // an optimizer step
    w.add_(1.0);
  }
  EXPECT_TRUE(all_close(w.detach(), before + 1.0));
  EXPECT_TRUE(w.requires_grad());
}

TEST(SavedTensorVersions, ModifyingASavedInputBeforeBackwardIsAnError) {
  Tensor x = random({3, 4}, 12).requires_grad_();
  Tensor loss = sum(x * x);  // mul saves x
  {
    autograd::NoGradGuard no_grad;
    x.mul_(2.0);
  }
  EXPECT_EMBER_ERROR(loss.backward(), "backward through 'mul': input 0 (float64 [3, 4]), saved for the gradient, "
                                      "was modified in place by 'mul_'");
}

TEST(SavedTensorVersions, SetOnADetachedOutputIsCaught) {
  // The silent wrong gradient of old: softmax's VJP reads its saved output P.
  auto [p, vjp] = make_vjp([](const Tensor& z) { return softmax(z, -1); }, random({2, 5}, 13));
  p.detach().set({0, 0}, 0.5);
  EXPECT_EMBER_ERROR(vjp(random({2, 5}, 14)), "its output (float64 [2, 5]), saved for the gradient, was modified in place by 'set'");
}

TEST(SavedTensorVersions, AnOptimizerStepBetweenForwardAndBackwardIsNamed) {
  Tensor w = random({4}, 15).requires_grad_();
  Tensor first = sum(w * w);   // recorded, not yet differentiated
  Tensor second = sum(w * 3.0);
  second.backward();
  optim::SGD opt({w}, optim::SGDOptions{0.1});
  opt.step();
  EXPECT_EMBER_ERROR(first.backward(), "modified in place by 'optimizer step'");
}

TEST(SavedTensorVersions, WritesThatTheGradientDoesNotReadAreFine) {
  // Before the forward, after the backward, and on an operand no VJP saved (add saves nothing).
  Tensor x = random({3}, 16).requires_grad_();
  Tensor c = random({3}, 17);
  c.fill_(0.25);
  Tensor y = sum(x * x + c);
  c.add_(1.0);  // add's VJP reads neither operand
  y.backward();
  EXPECT_TRUE(all_close(x.grad(), x.detach() * 2.0));
  {
    autograd::NoGradGuard no_grad;
    x.mul_(0.5);  // after backward: nothing will read the old graph
  }
  Tensor z = sum(x * x);
  z.backward();
  EXPECT_TRUE(all_close(x.grad(), x.detach() * 2.0 + (x.detach() * 4.0)));  // accumulated: 2x_old + 2x_new
}
