#include <cmath>

#include "framework/train/nn/dropout.h"
#include "framework/train/nn/embedding.h"
#include "framework/train/nn/init.h"
#include "framework/train/nn/layer_norm.h"
#include "framework/train/nn/linear.h"
#include "framework/train/nn/mlp.h"
#include "framework/train/optim/adam.h"
#include "framework/train/optim/sgd.h"
#include "ops/loss/cross_entropy.h"
#include "ops/norm/layer_norm.h"
#include "test_util.h"

using namespace ember;
using namespace ember::testing;

namespace {

// A module with a parameter of its own and two children, to check naming and recursion.
class Block : public nn::Module {
 public:
  explicit Block(Generator& g) {
    scale = register_parameter("scale", ones({3}));
    fc = register_module("fc", std::make_shared<nn::Linear>(4, 3, g));
    drop = register_module("drop", std::make_shared<nn::Dropout>(0.5));
  }
  Tensor forward(const Tensor& x) override { return drop->forward(fc->forward(x)) * scale; }
  std::string name() const override { return "Block"; }
  Tensor scale;
  std::shared_ptr<nn::Linear> fc;
  std::shared_ptr<nn::Dropout> drop;
};

std::vector<std::string> names(const NamedTensors& t) {
  std::vector<std::string> out;
  for (auto& [n, v] : t) out.push_back(n);
  return out;
}

}  // namespace

TEST(NnModule, NamesParametersRecursivelyInRegistrationOrder) {
  Generator g(1);
  Block b(g);
  EXPECT_EQ(names(b.named_parameters()), (std::vector<std::string>{"scale", "fc.weight", "fc.bias"}));
  EXPECT_EQ(b.num_parameters(), 3 + 12 + 3);
  for (const Tensor& p : b.parameters()) EXPECT_TRUE(p.requires_grad());
  auto mlp = nn::make_mlp({5, 4, 3, 2});
  EXPECT_EQ(names(mlp->named_parameters()),
            (std::vector<std::string>{"0.weight", "0.bias", "2.weight", "2.bias", "4.weight", "4.bias"}));
  EXPECT_EQ(mlp->size(), 5u);  // Linear ReLU Linear ReLU Linear
}

TEST(NnModule, RejectsDuplicateAndDottedNames) {
  class Bad : public nn::Module {
   public:
    explicit Bad(int which) {
      register_parameter("w", zeros({1}));
      if (which == 0) register_parameter("w", zeros({1}));
      if (which == 1) register_parameter("a.b", zeros({1}));
      if (which == 2) register_parameter("i", zeros({1}, DType::Int64));
    }
    Tensor forward(const Tensor& x) override { return x; }
    std::string name() const override { return "Bad"; }
  };
  EXPECT_EMBER_ERROR(Bad(0), "already exists");
  EXPECT_EMBER_ERROR(Bad(1), "must not contain '.'");
  EXPECT_EMBER_ERROR(Bad(2), "float32 or float64");
}

TEST(NnModule, TrainEvalReachesEverySubmodule) {
  Generator g(2);
  Block b(g);
  EXPECT_TRUE(b.drop->is_training());
  b.eval();
  EXPECT_FALSE(b.is_training());
  EXPECT_FALSE(b.drop->is_training());
  // In eval mode dropout is the identity, so the output is deterministic.
  Tensor x = randn({2, 4});
  EXPECT_TRUE(all_close(b(x), b(x), 0, 0));
  b.train();
  EXPECT_TRUE(b.drop->is_training());
}

TEST(NnModule, BackwardFillsEveryParameterGradient) {
  Generator g(3);
  Block b(g);
  b.eval();
  Tensor x = randn({2, 4}, DType::Float32, &g);
  sum(b(x)).backward();
  for (auto& [n, p] : b.named_parameters()) {
    ASSERT_TRUE(p.grad().defined()) << n;
    EXPECT_EQ(p.grad().shape(), p.shape()) << n;
  }
  // d sum(y * scale) / d scale = column sums of fc(x)
  Tensor h = b.fc->forward(x).detach();
  EXPECT_TRUE(all_close(b.scale.grad(), sum(h, {0}), 1e-5, 1e-5));
  b.zero_grad();
  for (const Tensor& p : b.parameters()) EXPECT_FALSE(p.grad().defined());
}

TEST(NnModule, StateDictRoundTripAndMismatchMessages) {
  Generator g1(4), g2(5);
  Block a(g1), b(g2);
  EXPECT_FALSE(all_close(a.fc->weight.detach(), b.fc->weight.detach(), 0, 0));
  b.load_state_dict(a.state_dict());
  for (size_t i = 0; i < a.parameters().size(); ++i)
    EXPECT_TRUE(all_close(a.parameters()[i].detach(), b.parameters()[i].detach(), 0, 0));
  // The parameter is updated in place: the member handle sees the new values and stays a leaf.
  EXPECT_TRUE(b.fc->weight.requires_grad());

  NamedTensors state = a.state_dict();
  state[1].second = zeros({3, 5});
  EXPECT_EMBER_ERROR(b.load_state_dict(state), "parameter 'fc.weight' has shape [3, 4] in the model but [3, 5]");
  state = a.state_dict();
  state[2].second = zeros({3}, DType::Float64);
  EXPECT_EMBER_ERROR(b.load_state_dict(state), "'fc.bias' is float32 in the model but float64");
  state = a.state_dict();
  state.pop_back();
  EXPECT_EMBER_ERROR(b.load_state_dict(state), "'fc.bias' (shape [3], float32) is missing");
  b.load_state_dict(state, /*strict=*/false);  // missing names allowed when not strict
  state = a.state_dict();
  state.emplace_back("extra", zeros({1}));
  EXPECT_EMBER_ERROR(b.load_state_dict(state), "has 'extra'");

  // A failed load leaves the model unchanged.
  Generator g3(6);
  Block c(g3);
  Tensor before = c.fc->weight.detach().clone();
  state = a.state_dict();
  state[2].second = zeros({4});
  EXPECT_THROW(c.load_state_dict(state), Error);
  EXPECT_TRUE(all_close(c.fc->weight.detach(), before, 0, 0));
}

TEST(NnInit, BoundsAndMoments) {
  Generator g(7);
  Tensor w = empty({256, 400});
  nn::init::kaiming_uniform_(w, g, nn::init::gain("relu"));
  double bound = std::sqrt(2.0) * std::sqrt(3.0 / 400);
  std::vector<double> v = w.to_vector<double>();
  double mx = 0, sq = 0, mean = 0;
  for (double x : v) mx = std::max(mx, std::abs(x)), sq += x * x, mean += x;
  EXPECT_LE(mx, bound);
  EXPECT_GT(mx, 0.99 * bound);
  EXPECT_NEAR(sq / double(v.size()), 2.0 / 400, 0.05 * 2.0 / 400);  // He: Var = 2 / fan_in
  EXPECT_NEAR(mean / double(v.size()), 0.0, 1e-3);

  Tensor x = empty({30, 50});
  nn::init::xavier_uniform_(x, g);
  double xb = std::sqrt(6.0 / 80);
  for (double e : x.to_vector<double>()) EXPECT_LE(std::abs(e), xb);
  EXPECT_EMBER_ERROR(nn::init::fans(empty({3})), "at least 2 dims");
  EXPECT_EMBER_ERROR(nn::init::gain("swish"), "unknown nonlinearity");

  // Seeded: the same generator seed gives the same weights.
  Generator a(9), b(9);
  nn::Linear la(6, 3, a), lb(6, 3, b);
  EXPECT_TRUE(all_close(la.weight.detach(), lb.weight.detach(), 0, 0));
  EXPECT_TRUE(all_close(la.bias.detach(), lb.bias.detach(), 0, 0));
}

TEST(NnLinear, ForwardMatchesMatmulAndChecksInput) {
  Generator g(10);
  nn::Linear l(4, 3, g, {true, nn::Init::XavierUniform, DType::Float64});
  EXPECT_TRUE(all_close(l.bias.detach(), zeros({3}, DType::Float64), 0, 0));  // Xavier starts the bias at 0
  Tensor x = random({2, 5, 4}, 11);
  Tensor ref = matmul(x, l.weight.detach().t()) + l.bias.detach();
  EXPECT_TRUE(all_close(l(x), ref, 1e-12, 1e-12));
  EXPECT_EMBER_ERROR(l(random({2, 5}, 1)), "expected input of shape (..., 4)");
  EXPECT_EMBER_ERROR(l(randn({2, 4})), "input is float32 but the weight is float64");
  nn::Linear nb(4, 3, g, {false});
  EXPECT_FALSE(nb.bias.defined());
  EXPECT_EQ(nb.parameters().size(), 1u);
  EXPECT_EQ(nb.name(), "Linear(4, 3, bias=false)");
}

TEST(NnLayers, EmbeddingLayerNormDropout) {
  Generator g(12);
  nn::Embedding emb(10, 4, g, 0.02);
  Tensor ids = from_vector(std::vector<int64_t>{3, 0, 3, 9}, {2, 2});
  Tensor e = emb(ids);
  EXPECT_EQ(e.shape(), (Shape{2, 2, 4}));
  EXPECT_TRUE(all_close(e.detach().slice(0, 0, 1).reshape({2, 4}).slice(0, 0, 1),
                        emb.weight.detach().slice(0, 3, 4), 0, 0));

  nn::LayerNorm ln(6);
  EXPECT_EQ(names(ln.named_parameters()), (std::vector<std::string>{"weight", "bias"}));
  Tensor y = ln(randn({3, 6}, DType::Float32, &g)).detach();
  for (int64_t r = 0; r < 3; ++r) {
    Tensor row = y.slice(0, r, r + 1);
    EXPECT_NEAR(mean(row).item(), 0.0, 1e-5);
    EXPECT_NEAR(mean(row * row).item(), 1.0, 1e-3);
  }
  EXPECT_EMBER_ERROR(ln(randn({3, 5})), "LayerNorm(6)");

  nn::Dropout d(0.5, 99);
  Tensor ones_in = ones({1000});
  Tensor kept = d(ones_in);
  double zeros_seen = 0;
  for (double v : kept.to_vector<double>()) {
    EXPECT_TRUE(v == 0.0 || std::abs(v - 2.0) < 1e-6) << v;  // inverted dropout scales by 1 / (1 - p)
    zeros_seen += v == 0.0;
  }
  EXPECT_NEAR(zeros_seen / 1000, 0.5, 0.08);
  nn::Dropout d2(0.5, 99);
  EXPECT_TRUE(all_close(d2(ones_in), kept, 0, 0));  // same seed, same mask
  d.eval();
  EXPECT_TRUE(all_close(d(ones_in), ones_in, 0, 0));
  EXPECT_EMBER_ERROR(nn::Dropout(1.0), "p must be in [0, 1)");
}

TEST(NnTraining, MlpLearnsXor) {
  // 2-8-2 MLP with Adam on the four XOR points: reaches 100% and a small loss in a few hundred steps.
  Tensor x = from_vector(std::vector<float>{0, 0, 0, 1, 1, 0, 1, 1}, {4, 2});
  Tensor y = from_vector(std::vector<int64_t>{0, 1, 1, 0}, {4});
  nn::MLPOptions mo;
  mo.activation = nn::Activation::Tanh;
  mo.init = nn::Init::XavierUniform;
  mo.seed = 3;
  auto net = nn::make_mlp({2, 8, 2}, mo);
  optim::AdamOptions ao;
  ao.lr = 0.05;
  optim::Adam opt(net->parameters(), ao);
  double first = 0, last = 0;
  for (int step = 0; step < 300; ++step) {
    Tensor loss = cross_entropy((*net)(x), y);
    if (step == 0) first = loss.item();
    last = loss.item();
    opt.zero_grad();
    loss.backward();
    opt.step();
  }
  EXPECT_GT(first, 0.5);
  EXPECT_LT(last, 0.05);
  Tensor pred = argmax((*net)(x).detach(), 1);
  EXPECT_EQ(pred.to_vector<int64_t>(), (std::vector<int64_t>{0, 1, 1, 0}));
}

// bias=false (PyTorch's nn.LayerNorm(..., bias=False), nanoGPT's): only the scale is a parameter,
// the output is the normalised input times it, and backward reaches it.
TEST(NnLayers, LayerNormWithoutBiasHasOnlyAWeight) {
  nn::LayerNorm ln(7, 1e-5, /*affine=*/true, /*bias=*/false, DType::Float64);
  EXPECT_EQ(names(ln.named_parameters()), (std::vector<std::string>{"weight"}));
  EXPECT_FALSE(ln.bias.defined());
  EXPECT_EQ(ln.name(), "LayerNorm(7, eps=1e-05, bias=false)");
  EXPECT_EQ(nn::LayerNorm(7).name(), "LayerNorm(7, eps=1e-05)");
  // Without affine there is neither parameter, whatever bias says.
  EXPECT_TRUE(nn::LayerNorm(7, 1e-5, false, true).named_parameters().empty());
  Tensor w = random({7}, 3);
  {
    autograd::NoGradGuard ng;
    ln.weight.copy_(w);
  }
  // Float64 reference by hand, on rows of an awkward (3, 5, 7) input.
  Tensor x = random({3, 5, 7}, 4);
  std::vector<double> xv = x.to_vector<double>(), wv = w.to_vector<double>(), want(xv.size());
  for (size_t r = 0; r < xv.size() / 7; ++r) {
    double m = 0, v = 0;
    for (size_t i = 0; i < 7; ++i) m += xv[r * 7 + i] / 7;
    for (size_t i = 0; i < 7; ++i) v += (xv[r * 7 + i] - m) * (xv[r * 7 + i] - m) / 7;
    for (size_t i = 0; i < 7; ++i) want[r * 7 + i] = (xv[r * 7 + i] - m) / std::sqrt(v + 1e-5) * wv[i];
  }
  Tensor y = ln(x);
  EXPECT_TRUE(all_close(y.detach(), from_vector(want, {3, 5, 7}), 1e-12, 1e-10));
  EXPECT_TRUE(all_close(y.detach(), layer_norm(x, w, zeros({7}, DType::Float64), 1e-5), 1e-14, 1e-12));
  Tensor g = random({3, 5, 7}, 5);
  sum(y * g).backward();
  ASSERT_TRUE(ln.weight.grad().defined());
  // d/dweight = sum over rows of g * xhat, xhat = y / weight.
  std::vector<double> gv = g.to_vector<double>(), dw(7, 0.0);
  for (size_t k = 0; k < gv.size(); ++k) dw[k % 7] += gv[k] * want[k] / wv[k % 7];
  EXPECT_TRUE(all_close(ln.weight.grad(), from_vector(dw, {7}), 1e-10, 1e-9));
  // The op with an undefined bias, differentiated in the input and the weight.
  EXPECT_TRUE(grad_ok([](const std::vector<Tensor>& in) { return layer_norm(in[0], in[1], Tensor(), 1e-5); },
                      {random({4, 6}, 6), random({6}, 7)}));
}

TEST(NnTraining, LinearRegressionRecoversTheMap) {
  // y = x A^T + c with SGD + momentum on mean squared error: the layer converges to (A, c).
  Generator g(21);
  Tensor a = from_vector(std::vector<double>{1.5, -2.0, 0.5, 0.25, 1.0, -0.75}, {2, 3});
  Tensor c = from_vector(std::vector<double>{0.3, -0.1}, {2});
  nn::Linear l(3, 2, g, {true, nn::Init::Default, DType::Float64});
  optim::SGD opt(l.parameters(), {0.1, 0.9, false, 0.0});
  for (int step = 0; step < 300; ++step) {
    Tensor x = normal({16, 3}, 0, 1, DType::Float64, &g);
    Tensor target = matmul(x, a.t()) + c;
    Tensor diff = l(x) - target;
    Tensor loss = mean(diff * diff);
    opt.zero_grad();
    loss.backward();
    opt.step();
  }
  EXPECT_TRUE(all_close(l.weight.detach(), a, 1e-4, 0));
  EXPECT_TRUE(all_close(l.bias.detach(), c, 1e-4, 0));
}
