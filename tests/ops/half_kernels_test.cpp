// The kernels that take bfloat16 and float16 (through float32 arithmetic, one rounding on store)
// beyond the op table's forward check: gradients of matmul, linear, layer_norm and softmax come
// back in the input dtype and match float64 on the same rounded values; mixed operands promote as
// in PyTorch; comparisons and sums of halves.
#include <cmath>

#include "test_util.h"

using namespace ember;
using ember::testing::random;

namespace {

const DType kHalves[] = {DType::BFloat16, DType::Float16};

double rtol_of(DType dt) { return dt == DType::BFloat16 ? 1e-2 : 1e-3; }

// |a - b| <= rtol * (1 + max|b|) + rtol * |b|: a 16-bit result against its float64 reference.
::testing::AssertionResult near(const Tensor& a, const Tensor& b, double rtol) {
  double scale = 1;
  for (double v : b.to_vector<double>()) scale = std::max(scale, 1 + std::abs(v));
  return ember::testing::all_close(a.to(DType::Float64), b, rtol * scale, rtol);
}

TEST(HalfKernels, MatmulAndLinearGradientsComeBackInTheInputDType) {
  for (DType dt : kHalves) {
    SCOPED_TRACE(name(dt));
    Tensor a = random({5, 7}, 1).to(dt), w = random({3, 7}, 2).to(dt), bias = random({3}, 3).to(dt);
    Tensor u = random({5, 3}, 4).to(dt);
    std::vector<Tensor> in = {a, w, bias};
    auto f = [&](const std::vector<Tensor>& x) { return std::vector<Tensor>{linear(x[0], x[1], x[2])}; };
    auto [ys, vjp] = make_vjp(f, in);
    std::vector<Tensor> g = vjp({u});
    // The same in float64 on the rounded values.
    std::vector<Tensor> in64 = {a.to(DType::Float64), w.to(DType::Float64), bias.to(DType::Float64)};
    auto [ys64, vjp64] = make_vjp(f, in64);
    std::vector<Tensor> g64 = vjp64({u.to(DType::Float64)});
    EXPECT_EQ(ys[0].dtype(), dt);
    EXPECT_TRUE(near(ys[0], ys64[0], rtol_of(dt)));
    for (size_t i = 0; i < 3; ++i) {
      SCOPED_TRACE(i);
      EXPECT_EQ(g[i].dtype(), dt);
      EXPECT_TRUE(near(g[i], g64[i], rtol_of(dt)));
    }
    // matmul with a batch and a transposed operand.
    Tensor p = random({2, 4, 6}, 5).to(dt), q = random({2, 5, 6}, 6).to(dt).transpose(-2, -1);
    EXPECT_TRUE(near(matmul(p, q), matmul(p.to(DType::Float64), q.to(DType::Float64)), rtol_of(dt)));
  }
}

TEST(HalfKernels, NormAndSoftmaxGradientsInTheInputDType) {
  for (DType dt : kHalves) {
    SCOPED_TRACE(name(dt));
    Tensor x = random({4, 9}, 7).to(dt), w = random({9}, 8).to(dt), b = random({9}, 9).to(dt);
    Tensor u = random({4, 9}, 10).to(dt);
    auto f = [](const std::vector<Tensor>& v) {
      return std::vector<Tensor>{softmax(layer_norm(v[0], v[1], v[2]), -1) * v[0]};
    };
    auto [ys, vjp] = make_vjp(f, std::vector<Tensor>{x, w, b});
    std::vector<Tensor> g = vjp({u});
    auto [ys64, vjp64] = make_vjp(f, std::vector<Tensor>{x.to(DType::Float64), w.to(DType::Float64), b.to(DType::Float64)});
    std::vector<Tensor> g64 = vjp64({u.to(DType::Float64)});
    // Several roundings in a row (each op stores 16 bits): a few units in the last place.
    const double tol = 4 * rtol_of(dt);
    EXPECT_TRUE(near(ys[0], ys64[0], tol));
    for (size_t i = 0; i < 3; ++i) {
      SCOPED_TRACE(i);
      EXPECT_EQ(g[i].dtype(), dt);
      EXPECT_TRUE(near(g[i], g64[i], tol));
    }
  }
}

TEST(HalfKernels, MixedOperandsPromoteAsInPyTorch) {
  Tensor h = random({3}, 11).to(DType::Float16), b = random({3}, 12).to(DType::BFloat16);
  Tensor f = random({3}, 13).to(DType::Float32), d = random({3}, 14);
  EXPECT_EQ((h + f).dtype(), DType::Float32);
  EXPECT_EQ((f * b).dtype(), DType::Float32);
  EXPECT_EQ((b - d).dtype(), DType::Float64);
  EXPECT_EQ((h + b).dtype(), DType::Float32);  // neither holds the other
  EXPECT_EQ((h * 2.0).dtype(), DType::Float16);  // a Python-style number keeps the tensor's dtype
  EXPECT_TRUE(ember::testing::all_close((h + f).to(DType::Float64),
                                        h.to(DType::Float64) + f.to(DType::Float64), 1e-6, 1e-6));
  EXPECT_EQ((h + b).to_vector<double>(), (h.to(DType::Float32) + b.to(DType::Float32)).to_vector<double>());
  Tensor m = h.gt(b);  // compared in float32
  EXPECT_EQ(m.dtype(), DType::Bool);
  EXPECT_EQ(m.to_vector<bool>(), h.to(DType::Float32).gt(b.to(DType::Float32)).to_vector<bool>());
  EXPECT_EQ(h.eq(h).to_vector<bool>(), std::vector<bool>(3, true));
  // The gradient of a promoted operand comes back in its own dtype.
  Tensor hl = h.clone().requires_grad_();
  (hl * f).sum().backward();
  EXPECT_EQ(hl.grad().dtype(), DType::Float16);
  EXPECT_EQ(hl.grad().to_vector<double>(), f.to(DType::Float16).to_vector<double>());
}

TEST(HalfKernels, SumsAccumulateInFloat32) {
  // 4096 ones in bfloat16: a bfloat16 accumulator stops at 256 (256 + 1 rounds back to 256).
  Tensor x = ones({4096}, DType::BFloat16);
  EXPECT_EQ(x.sum().item(), 4096.0);
  EXPECT_EQ(x.sum().dtype(), DType::BFloat16);
  Tensor y = random({33, 17}, 15).to(DType::Float16);
  EXPECT_TRUE(near(y.sum(0), y.to(DType::Float64).sum(0), 1e-3));
  EXPECT_TRUE(near(embedding(y, from_vector(std::vector<int64_t>{3, 0, 3})), embedding(y.to(DType::Float64),
                   from_vector(std::vector<int64_t>{3, 0, 3})), 0));
}

TEST(HalfKernels, OpsWithoutAHalfKernelRefuseByName) {
  Tensor x = random({2, 3}, 16).to(DType::BFloat16);
  EXPECT_EMBER_ERROR(cumsum(x, 0), "cumsum: got bfloat16, accepts float32, float64");
  EXPECT_EMBER_ERROR(x.max(), "got bfloat16, accepts");
}

}  // namespace
