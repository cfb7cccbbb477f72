#include "test_util.h"

using namespace ember;
using namespace ember::testing;

TEST(Smoke, GradOfCube) {
  auto f = [](const Tensor& x) { return x * x * x; };
  Tensor x = scalar(1.5, DType::Float64);
  EXPECT_NEAR(grad(f)(x).item(), 3 * 1.5 * 1.5, 1e-12);
  EXPECT_NEAR(grad(grad(f))(x).item(), 6 * 1.5, 1e-12);
}
