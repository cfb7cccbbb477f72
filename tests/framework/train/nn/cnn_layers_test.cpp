// The CNN layers: Conv2d, MaxPool2d, BatchNorm2d (train/eval, running statistics in the state),
// GroupNorm, RMSNorm, Flatten, and buffers in Module's state.
#include "ember.h"
#include "test_util.h"

using namespace ember;
using namespace ember::testing;

TEST(Conv2dLayer, ShapesInitialisationAndParameters) {
  Generator gen(1);
  Conv2dOptions o;
  o.padding = {1, 1};
  o.groups = 2;
  nn::Conv2d conv(4, 6, {3, 3}, gen, o);
  EXPECT_EQ(conv.weight.shape(), (Shape{6, 2, 3, 3}));
  EXPECT_EQ(conv.num_parameters(), 6 * 2 * 9 + 6);
  const double bound = 1.0 / std::sqrt(18.0);
  EXPECT_LE(max(abs(conv.weight)).item(), bound);
  EXPECT_GT(max(abs(conv.weight)).item(), 0.5 * bound);
  Tensor x = randn({2, 4, 5, 5});
  Tensor y = conv(x);
  EXPECT_EQ(y.shape(), (Shape{2, 6, 5, 5}));
  EXPECT_TRUE(all_close(y, conv2d(x, conv.weight.detach(), conv.bias.detach(), o), 0, 0));
  EXPECT_EMBER_ERROR(conv(randn({2, 3, 5, 5})), "expected input of shape (N, 4, H, W), got [2, 3, 5, 5]");
  EXPECT_EMBER_ERROR(nn::Conv2d(3, 6, {3, 3}, gen, o), "Conv2d: groups (2) must be positive and divide in_channels (3)");
}

TEST(BatchNorm2dLayer, TrainAndEvalModesAndRunningStatisticsInTheState) {
  nn::BatchNorm2d bn(3, 1e-5, 0.1, true, DType::Float64);
  EXPECT_EQ(bn.parameters().size(), 2u);  // the running statistics are buffers, not parameters
  Tensor x = random({4, 3, 2, 2}, 60) * 2.0 + 3.0;
  Tensor y = bn(x);  // training: batch statistics
  EXPECT_NEAR(mean(y).item(), 0.0, 1e-12);
  EXPECT_GT(bn.running_mean.at({0}), 0.1);  // moved towards the batch mean (about 3)
  bn.eval();
  Tensor ye = bn(x);
  EXPECT_TRUE(all_close(ye, batch_norm(x, bn.running_mean, bn.running_var, bn.weight.detach(), bn.bias.detach(), false),
                        1e-14, 0));
  NamedTensors state = bn.state_dict();
  ASSERT_EQ(state.size(), 4u);
  EXPECT_EQ(state[2].first, "running_mean");
  EXPECT_EQ(state[3].first, "running_var");
  nn::BatchNorm2d other(3, 1e-5, 0.1, true, DType::Float64);
  other.load_state_dict(state);
  EXPECT_TRUE(all_close(other.running_var, bn.running_var, 0, 0));
  other.eval();
  EXPECT_TRUE(all_close(other(x), ye, 0, 0));
}

TEST(CnnLayers, SequentialCnnTrainsItsParametersAndSavesBuffers) {
  Generator gen(2);
  nn::Sequential net;
  Conv2dOptions o;
  o.padding = {1, 1};
  net.add(std::make_shared<nn::Conv2d>(1, 4, std::array<int64_t, 2>{3, 3}, gen, o));
  net.add(std::make_shared<nn::BatchNorm2d>(4));
  net.add(std::make_shared<nn::ActivationLayer>(nn::Activation::ReLU));
  net.add(std::make_shared<nn::MaxPool2d>(Pair{2, 2}));
  net.add(std::make_shared<nn::Flatten>());
  net.add(std::make_shared<nn::Linear>(4 * 3 * 3, 2, gen));
  Tensor x = randn({5, 1, 6, 6});
  Tensor out = net(x);
  EXPECT_EQ(out.shape(), (Shape{5, 2}));
  sum(out * out).backward();
  for (auto& [name, p] : net.named_parameters()) EXPECT_TRUE(p.grad().defined()) << name;
  NamedTensors st = net.state_dict();
  bool has_running = false;
  for (auto& [n, t] : st) has_running = has_running || n == "1.running_var";
  EXPECT_TRUE(has_running);
  EXPECT_EQ(net.named_buffers().size(), 2u);
}

TEST(CnnLayers, GroupNormRmsNormAndFlatten) {
  nn::GroupNorm gn(2, 4, 1e-5, true, DType::Float64);
  Tensor x = random({3, 4, 5}, 70);
  EXPECT_TRUE(all_close(gn(x), group_norm(x, 2, gn.weight.detach(), gn.bias.detach()), 0, 0));
  EXPECT_EMBER_ERROR(nn::GroupNorm(3, 4), "GroupNorm: groups (3) must be positive and divide channels (4)");
  nn::RMSNorm rn(5, 1e-6, true, DType::Float64);
  EXPECT_TRUE(all_close(rn(x), rms_norm(x, rn.weight.detach(), 1e-6), 0, 0));
  EXPECT_EMBER_ERROR(rn(random({2, 4}, 1)), "RMSNorm(5): expected input of shape (..., 5), got [2, 4]");
  nn::Flatten flat;
  EXPECT_EQ(flat(x).shape(), (Shape{3, 20}));
  EXPECT_EQ(nn::Flatten(2)(random({2, 3, 4, 5}, 1)).shape(), (Shape{2, 3, 20}));
  EXPECT_EMBER_ERROR(nn::Flatten(3)(x), "Flatten(3): the input [3, 4, 5] has no dim 3");
}
