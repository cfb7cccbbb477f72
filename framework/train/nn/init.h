// Standard weight initialisations, each drawn from a Generator so that seeded models repeat exactly.
// They write in place (not recorded by autograd), so they may be applied to parameters.
#pragma once
#include <string>
#include <utility>

#include "framework/core/tensor.h"

namespace ember::nn::init {

// Fan-in and fan-out of a weight: (out, in) for a Linear weight, dims 0 and 1 times the rest otherwise.
std::pair<int64_t, int64_t> fans(const Tensor& w);

// The gain that keeps activations' variance for a nonlinearity: "linear", "relu", "tanh", "gelu"
// ("leaky_relu" with slope `param`).
double gain(const std::string& nonlinearity, double param = 0.0);

void uniform_(Tensor& t, double lo, double hi, Generator& gen);
void normal_(Tensor& t, double mean, double stddev, Generator& gen);
void zeros_(Tensor& t);
void ones_(Tensor& t);
// He et al.: U(-b, b) with b = gain * sqrt(3 / fan_in); gain("relu") = sqrt(2).
void kaiming_uniform_(Tensor& t, Generator& gen, double gain = 1.4142135623730951);
// Glorot and Bengio: U(-b, b) with b = gain * sqrt(6 / (fan_in + fan_out)).
void xavier_uniform_(Tensor& t, Generator& gen, double gain = 1.0);

}  // namespace ember::nn::init
