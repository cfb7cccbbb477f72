// A user's program: differentiates y = x^3 at x = sqrt(2) with the installed Ember.
#include <ember.h>

#include <cmath>
#include <iostream>

int main() {
  auto f = [](const ember::Tensor& x) { return x * x * x; };
  ember::Tensor x = ember::scalar(std::sqrt(2.0), ember::DType::Float64);
  double g = ember::grad(f)(x).item();
  std::cout << "dy/dx = " << std::round(g * 1000) / 1000 << "\n";
  return std::abs(g - 6.0) < 1e-9 ? 0 : 1;
}
