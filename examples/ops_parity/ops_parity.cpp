// Prints, one line per case, "name v0 v1 ...": the values and gradients of issue 16's ops on fixed
// inputs (sin-based, so Python can build the same ones). ops_parity.py compares them with PyTorch.
#include <cmath>
#include <cstdio>

#include "ember.h"

using namespace ember;

namespace {

// sin(a (i + 1)) * 2 for element i: inputs both sides build without sharing a generator.
Tensor det(const Shape& s, double a) {
  Tensor t = zeros(s, DType::Float64);
  double* p = t.data<double>();
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = std::sin(a * double(i + 1)) * 2;
  return t;
}
// One output line.
void show(const char* name, const Tensor& t) {
  std::printf("%s", name);
  for (double v : cast(t, DType::Float64).to_vector<double>()) std::printf(" %.15g", v);
  std::printf("\n");
}
}  // namespace

int main() {
  Tensor logits = det({5, 4}, 0.7);
  Tensor tg = from_vector(std::vector<int64_t>{3, 0, 7, 2, 1});
  CrossEntropyOptions o; o.ignore_index = 7; o.label_smoothing = 0.2;
  show("ce_ls_ign", cross_entropy(logits, tg, o));
  show("ce_ls_ign_grad", grad([&](const Tensor& v) { return cross_entropy(v, tg, o); })(logits));
  o.reduction = Reduction::None; show("ce_none", cross_entropy(logits, tg, o));
  Tensor a = det({3, 4}, 0.3), b = det({3, 4}, 0.9);
  show("smooth_l1", smooth_l1_loss(a, b, Reduction::None, 0.5));
  Tensor p = sigmoid(a), t01 = sigmoid(b);
  show("bce", binary_cross_entropy(p, t01, Reduction::Sum));
  show("bcel", binary_cross_entropy_with_logits(a * 30.0, t01, Reduction::Mean));
  show("bcel_grad", grad([&](const Tensor& v) { return binary_cross_entropy_with_logits(v, t01); })(a * 30.0));
  show("nll", nll_loss(log_softmax(logits, -1), tg, Reduction::Mean, 7));
  show("var0", var(a, {1}, 0)); show("std2", ember::std(a, {0}, 2));
  show("norm1", norm(a, 1, {1})); show("norminf", norm(a, INFINITY, {0})); show("norm3", norm(a, 3));
  show("softplus", softplus(a * 5.0, 2.0, 3.0));
  show("elu", elu(a, 1.5)); show("lrelu", leaky_relu(a, 0.1)); show("silu", silu(a));
  Tensor c = from_vector(std::vector<double>{-1, 0, 0.5, 1, 2});
  show("clamp_grad", grad([](const Tensor& v) { return sum(clamp(v, 0, 1)); })(c));
  Tensor m1 = from_vector(std::vector<double>{1, 2, 3}), m2 = from_vector(std::vector<double>{1, 5, 0});
  show("max_grad", grad([&](const Tensor& v) { return sum(maximum(v, m2)); })(m1));
  Tensor pz = from_vector(std::vector<double>{2, 3, 4, 2, 0, 5, 0, 7, 0}, {3, 3});
  show("prod_grad", grad([](const Tensor& v) { return sum(prod(v, {1})); })(pz));
  show("einsum", einsum("bij,bj->bi", {det({2, 3, 4}, 0.2), det({2, 4}, 0.4)}));
  show("pad_reflect", pad(det({2, 4}, 0.5), {2, 3, 1, 1}, PadMode::Reflect));
  show("roll", roll(det({3, 4}, 0.5), -5, 1)); show("repeat", repeat(det({2, 3}, 0.5), {2, 1, 2}));
  show("tril", tril(det({3, 4}, 0.5), -1)); show("triu", triu(det({3, 4}, 0.5), 1));
  show("linspace", linspace(-1, 2, 7, DType::Float64));
  show("gather", gather(det({3, 5}, 0.3), 1, from_vector(std::vector<int64_t>{4, 4, 0, 1, 3, 2}, {3, 2})));
  show("min_grad", grad([](const Tensor& v) { return sum(min(v, 1)); })(from_vector(std::vector<double>{2, -1, 3, -1}, {1, 4})));
  Tensor kink = from_vector(std::vector<double>{-1, 0, 1});
  show("lrelu_grad0", grad([](const Tensor& v) { return sum(leaky_relu(v, 0.1)); })(kink));
  show("elu_grad0", grad([](const Tensor& v) { return sum(elu(v, 1.5)); })(kink));
  show("abs_grad0", grad([](const Tensor& v) { return sum(abs(v)); })(kink));
  show("sl1_edge_grad", grad([&](const Tensor& v) { return smooth_l1_loss(v, zeros({3}, DType::Float64), Reduction::Sum, 1.0); })(kink));
  show("bcel0_grad", grad([](const Tensor& v) { return binary_cross_entropy_with_logits(v, full({3}, 0.3, DType::Float64)); })(kink * 0.0));
  show("clamp_min_grad", grad([](const Tensor& v) { return sum(clamp_min(v, 0)); })(kink));
  show("hess", hessian([](const Tensor& v) { return sum(exp(v) * sin(v)) + sum(v) * sum(v * v); }, det({4}, 0.3)));
}
