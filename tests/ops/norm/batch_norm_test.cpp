// batch_norm beyond the op table: the running statistics (momentum, unbiased variance),
// inference mode, and float32 on several threads.
#include <cmath>

#include "ember.h"
#include "framework/core/parallel.h"
#include "test_util.h"

using namespace ember;
using namespace ember::testing;

TEST(BatchNorm, TrainingUpdatesRunningStatisticsAsPyTorch) {
  Tensor x = random({4, 2, 3, 3}, 30) * 3.0 + 1.5;
  Tensor rm = from_vector(std::vector<double>{0.5, -1.0}), rv = from_vector(std::vector<double>{2.0, 0.25});
  batch_norm(x, rm, rv, Tensor(), Tensor(), true, 0.2, 1e-5);
  for (int64_t c = 0; c < 2; ++c) {
    Tensor xc = x.slice(1, c, c + 1);
    double n = double(xc.numel()), m = sum(xc).item() / n;
    double ss = sum((xc - m) * (xc - m)).item();
    EXPECT_NEAR(rm.at({c}), 0.8 * (c == 0 ? 0.5 : -1.0) + 0.2 * m, 1e-12);
    EXPECT_NEAR(rv.at({c}), 0.8 * (c == 0 ? 2.0 : 0.25) + 0.2 * ss / (n - 1), 1e-12);  // unbiased
  }
}

TEST(BatchNorm, InferenceUsesRunningStatisticsAndPassesGradcheck) {
  Tensor x = random({3, 4, 2, 5}, 31), w = random({4}, 32), b = random({4}, 33);
  Tensor rm = random({4}, 34), rv = random({4}, 35, true);
  Tensor before = rm.clone();
  Tensor y = batch_norm(x, rm, rv, w, b, false);
  Tensor expect = ((x - rm.reshape({1, 4, 1, 1})) / sqrt(rv.reshape({1, 4, 1, 1}) + 1e-5)) * w.reshape({1, 4, 1, 1}) +
                  b.reshape({1, 4, 1, 1});
  EXPECT_TRUE(all_close(y, expect, 1e-12, 1e-10));
  EXPECT_TRUE(all_close(rm, before, 0, 0));  // inference leaves the statistics alone
  EXPECT_TRUE(grad_ok([&](const std::vector<Tensor>& a) { return batch_norm(a[0], rm, rv, a[1], a[2], false); }, {x, w, b}));
}

TEST(BatchNorm, Float32OnTwoThreadsMatchesFloat64ForwardAndBackward) {
  set_num_threads(2);
  Tensor x = random({8, 6, 7, 7}, 36) * 4.0 + 10.0, w = random({6}, 37), b = random({6}, 38), g = random({8, 6, 7, 7}, 39);
  auto grads = [&](DType dt) {
    Tensor xd = x.clone().to(dt), wd = w.clone().to(dt), bd = b.clone().to(dt);  // fresh leaves
    xd.requires_grad_(), wd.requires_grad_(), bd.requires_grad_();
    Tensor y = batch_norm(xd, Tensor(), Tensor(), wd, bd, true);
    sum(y * g.to(dt)).backward();
    return std::vector<Tensor>{y.detach().to(DType::Float64), xd.grad().to(DType::Float64), wd.grad().to(DType::Float64),
                               bd.grad().to(DType::Float64)};
  };
  std::vector<Tensor> a = grads(DType::Float64), f = grads(DType::Float32);
  for (size_t i = 0; i < a.size(); ++i) EXPECT_TRUE(all_close(f[i], a[i], 2e-3, 1e-3)) << "output " << i;
}

TEST(BatchNorm, RejectsRunningStatisticsThatRequireGradients) {
  Tensor rm = zeros({3}, DType::Float64), rv = ones({3}, DType::Float64);
  rm.requires_grad_();
  EXPECT_EMBER_ERROR(batch_norm(random({4, 3}, 1), rm, rv, Tensor(), Tensor(), true), "batch_norm: the running statistics");
  EXPECT_EMBER_ERROR(batch_norm(random({4, 3}, 1), Tensor(), rv, Tensor(), Tensor(), true),
                     "batch_norm: running_mean and running_var must be given together");
}
