// Binary ops keep only the operands their VJP reads (ops/elementwise/binary.cpp, Saves): the
// gradients stay right, with broadcasting and at second order, and an add releases its result.
#include <memory>

#include "test_util.h"

using namespace ember;
using namespace ember::testing;

namespace {
using BinaryFn = Tensor (*)(const Tensor&, const Tensor&);
Tensor do_add(const Tensor& a, const Tensor& b) { return add(a, b); }
Tensor do_sub(const Tensor& a, const Tensor& b) { return sub(a, b); }
Tensor do_mul(const Tensor& a, const Tensor& b) { return mul(a, b); }
Tensor do_div(const Tensor& a, const Tensor& b) { return div(a, b); }
Tensor do_pow(const Tensor& a, const Tensor& b) { return pow(a, b); }
Tensor do_max(const Tensor& a, const Tensor& b) { return maximum(a, b); }
Tensor do_min(const Tensor& a, const Tensor& b) { return minimum(a, b); }
}  // namespace

TEST(BinarySavedTensors, GradientsWithBroadcastingAndTransposes) {
  BinaryFn ops[] = {do_add, do_sub, do_mul, do_div, do_pow, do_max, do_min};
  const char* names[] = {"add", "sub", "mul", "div", "pow", "maximum", "minimum"};
  std::pair<Shape, Shape> shapes[] = {{{3, 4}, {3, 4}}, {{3, 4}, {4}}, {{1, 4}, {3, 1}}, {{}, {2, 3}}};
  for (int k = 0; k < 7; ++k) {
    uint64_t seed = 10;
    for (auto& [sa, sb] : shapes) {
      Tensor a = random(sa, seed++, true), b = random(sb, seed++, true);
      EXPECT_TRUE(grad_ok([&](const std::vector<Tensor>& x) { return ops[k](x[0], x[1]); }, {a, b}))
          << names[k] << " " << to_string(sa) << " " << to_string(sb);
    }
    // A transposed (non-contiguous) operand.
    Tensor a = random({4, 3}, 99, true).t(), b = random({3, 4}, 98, true);
    EXPECT_TRUE(grad_ok([&](const std::vector<Tensor>& x) { return ops[k](x[0], x[1]); }, {a, b})) << names[k];
  }
}

TEST(BinarySavedTensors, SecondOrderThroughDivAndPow) {
  // f(x) = x / (1 + x) + x^x: f'' checked against central differences of f'.
  auto f = [](const Tensor& x) { return x / (1.0 + x) + pow(x, x); };
  Tensor x = scalar(1.3, DType::Float64);
  double h = 1e-5;
  double fd = (grad(f)(scalar(1.3 + h, DType::Float64)).item() - grad(f)(scalar(1.3 - h, DType::Float64)).item()) / (2 * h);
  EXPECT_NEAR(grad(grad(f))(x).item(), fd, 1e-6);
}

TEST(BinarySavedTensors, AddReleasesItsResultAndMulKeepsItsOperands) {
  std::weak_ptr<Storage> sum_storage, product_operand;
  auto f = [&](const std::vector<Tensor>& x) {
    Tensor s = x[0] + x[1];  // only read by the sum below, whose VJP needs just a shape
    sum_storage = s.impl()->storage;
    Tensor e = exp(x[0]);  // read by the mul's VJP
    product_operand = e.impl()->storage;
    return std::vector<Tensor>{sum(s) + sum(e * x[1])};
  };
  auto [ys, vjp] = make_vjp(f, {random({64}, 1), random({64}, 2)});
  EXPECT_TRUE(sum_storage.expired()) << "the add's node keeps its result alive";
  EXPECT_FALSE(product_operand.expired()) << "the mul's node must keep the operand its VJP reads";
  auto g = vjp({scalar(1.0, DType::Float64)});
  EXPECT_TRUE(all_close(g[1], 1.0 + exp(random({64}, 1)), 1e-12, 1e-12));
}
