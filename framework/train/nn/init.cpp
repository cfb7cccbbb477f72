#include "framework/train/nn/init.h"

#include <cmath>

#include "framework/core/autograd/trace.h"

namespace ember::nn::init {

std::pair<int64_t, int64_t> fans(const Tensor& w) {
  EMBER_CHECK(w.dim() >= 2, "init: fan-in and fan-out need a weight of at least 2 dims, got shape ", to_string(w.shape()));
  int64_t receptive = 1;
  for (int64_t d = 2; d < w.dim(); ++d) receptive *= w.size(d);
  return {w.size(1) * receptive, w.size(0) * receptive};
}

double gain(const std::string& nonlinearity, double param) {
  if (nonlinearity == "linear" || nonlinearity == "sigmoid") return 1.0;
  if (nonlinearity == "relu") return std::sqrt(2.0);
  if (nonlinearity == "tanh") return 5.0 / 3.0;
  if (nonlinearity == "gelu") return std::sqrt(2.0);  // GELU behaves like ReLU for the variance argument
  if (nonlinearity == "leaky_relu") return std::sqrt(2.0 / (1.0 + param * param));
  throw Error(str("init::gain: unknown nonlinearity '", nonlinearity, "' (expected linear, sigmoid, relu, tanh, gelu, leaky_relu)"));
}

void uniform_(Tensor& t, double lo, double hi, Generator& gen) {
  autograd::NoGradGuard g;
  t.copy_(uniform(t.shape(), lo, hi, t.dtype(), &gen));
}

void normal_(Tensor& t, double mean, double stddev, Generator& gen) {
  autograd::NoGradGuard g;
  t.copy_(normal(t.shape(), mean, stddev, t.dtype(), &gen));
}

void zeros_(Tensor& t) { t.fill_(0.0); }
void ones_(Tensor& t) { t.fill_(1.0); }

void kaiming_uniform_(Tensor& t, Generator& gen, double g) {
  double b = g * std::sqrt(3.0 / double(fans(t).first));
  uniform_(t, -b, b, gen);
}

void xavier_uniform_(Tensor& t, Generator& gen, double g) {
  auto [in, out] = fans(t);
  double b = g * std::sqrt(6.0 / double(in + out));
  uniform_(t, -b, b, gen);
}

}  // namespace ember::nn::init
