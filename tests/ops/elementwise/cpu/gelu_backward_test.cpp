// The one-pass GELU (tanh) backward against a float64 loop of the textbook derivative, on lengths
// that leave every vector tail, on strided inputs, both dtypes, both code paths; and bad input.
#include <cmath>

#include "ops/elementwise/cpu/gelu_backward.h"
#include "ops/reference.h"

using namespace ember;
using namespace ember::testing;

namespace {

double dgelu_tanh(double x) {
  const double c = std::sqrt(2.0 / M_PI), u = c * (x + 0.044715 * x * x * x), th = std::tanh(u);
  return 0.5 * (1 + th) + 0.5 * x * (1 - th * th) * c * (1 + 3 * 0.044715 * x * x);
}

Tensor reference(const Tensor& g, const Tensor& x) {
  std::vector<double> gv = g.to_vector<double>(), xv = x.to_vector<double>(), out(gv.size());
  for (size_t i = 0; i < gv.size(); ++i) out[i] = gv[i] * dgelu_tanh(xv[i]);
  return from_vector(out, x.shape());
}

}  // namespace

TEST(GeluTanhBackward, MatchesFloat64Reference) {
  for (int64_t n : {1, 7, 8, 9, 31, 1000, 70001}) {  // 70001: several threads' ranges and a tail
    Tensor x = 4.0 * random({n}, uint64_t(n)), g = random({n}, uint64_t(n) + 1);
    Tensor want = reference(g, x);
    for (bool simd : {true, false}) {
      SCOPED_TRACE(std::to_string(n) + (simd ? " default path" : " scalar"));
      Tensor got64 = simd ? cpu::gelu_tanh_backward(g, x) : cpu::gelu_tanh_backward_scalar(g, x);
      EXPECT_EQ(got64.dtype(), DType::Float64);
      EXPECT_TRUE(all_close(got64, want, 1e-12, 1e-12));
      Tensor x32 = x.to(DType::Float32), g32 = g.to(DType::Float32);
      Tensor got32 = simd ? cpu::gelu_tanh_backward(g32, x32) : cpu::gelu_tanh_backward_scalar(g32, x32);
      EXPECT_EQ(got32.dtype(), DType::Float32);
      EXPECT_TRUE(all_close(got32, reference(g32, x32), 2e-6, 2e-5));
    }
  }
}

TEST(GeluTanhBackward, StridedInputsAndLargeMagnitudes) {
  Tensor x = transposed_random({5, 13}, 3), g = strided_random({5, 13}, 4);
  EXPECT_TRUE(all_close(cpu::gelu_tanh_backward(g, x), reference(g, x), 1e-12, 1e-12));
  // Saturated tanh: the derivative is 1 far right and 0 far left, not NaN.
  Tensor big = from_vector(std::vector<double>{1e3, -1e3, 1e13, -1e13, 30, -30, 0, 1e-30, 1, -1, 2, -2}, {12}).to(DType::Float32);
  Tensor ones = full({12}, 1.0, DType::Float32);
  std::vector<double> d = cpu::gelu_tanh_backward(ones, big).to_vector<double>();
  EXPECT_EQ(d[0], 1.0);
  EXPECT_EQ(d[1], 0.0);
  EXPECT_EQ(d[2], 1.0);
  EXPECT_EQ(d[3], 0.0);
  EXPECT_NEAR(d[6], 0.5, 1e-7);
  for (double v : d) EXPECT_TRUE(std::isfinite(v));
}

TEST(GeluTanhBackward, RejectsBadInput) {
  Tensor x = random({4}, 1), g3 = random({3}, 2);
  EXPECT_THROW(cpu::gelu_tanh_backward(g3, x), Error);
  EXPECT_THROW(cpu::gelu_tanh_backward(x.to(DType::Float32), x), Error);
  EXPECT_THROW(cpu::gelu_tanh_backward(x.to(DType::Int64), x.to(DType::Int64)), Error);
}

// The primitive's backward takes the one-pass rule where no graph of the backward is recorded, and
// gives the composite rule's gradient (the op table checks this too, on its own samples).
TEST(GeluTanhBackward, IsGeluTanhsFusedVjp) {
  Tensor x = (3.0 * random({6, 70}, 9)).to(DType::Float32).requires_grad_(), u = random({6, 70}, 10).to(DType::Float32);
  (gelu(x, true) * u).sum().backward();
  EXPECT_TRUE(all_close(x.grad(), reference(u, x.detach()), 2e-6, 2e-5));
}

namespace {

double dgelu_erf(double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)) + x * std::exp(-0.5 * x * x) / std::sqrt(2 * M_PI); }

Tensor reference_erf(const Tensor& g, const Tensor& x) {
  std::vector<double> gv = g.to_vector<double>(), xv = x.to_vector<double>(), out(gv.size());
  for (size_t i = 0; i < gv.size(); ++i) out[i] = gv[i] * dgelu_erf(xv[i]);
  return from_vector(out, x.shape());
}

}  // namespace

TEST(GeluBackward, MatchesFloat64Reference) {
  for (int64_t n : {1, 7, 8, 9, 31, 1000, 70001}) {
    Tensor x = 5.0 * random({n}, uint64_t(n) + 50), g = random({n}, uint64_t(n) + 51);
    for (bool simd : {true, false}) {
      SCOPED_TRACE(std::to_string(n) + (simd ? " default path" : " scalar"));
      Tensor got64 = simd ? cpu::gelu_backward(g, x) : cpu::gelu_backward_scalar(g, x);
      EXPECT_EQ(got64.dtype(), DType::Float64);
      EXPECT_TRUE(all_close(got64, reference_erf(g, x), 1e-12, 1e-12));
      Tensor x32 = x.to(DType::Float32), g32 = g.to(DType::Float32);
      Tensor got32 = simd ? cpu::gelu_backward(g32, x32) : cpu::gelu_backward_scalar(g32, x32);
      EXPECT_EQ(got32.dtype(), DType::Float32);
      EXPECT_TRUE(all_close(got32, reference_erf(g32, x32), 2e-6, 2e-5));
    }
  }
}

TEST(GeluBackward, TailsStridesAndNonFinite) {
  Tensor x = transposed_random({5, 13}, 5), g = strided_random({5, 13}, 6);
  EXPECT_TRUE(all_close(cpu::gelu_backward(g, x), reference_erf(g, x), 1e-12, 1e-12));
  // 1 far right, 0 far left (the density underflows before x overflows the product); 0.5 at 0.
  Tensor big = from_vector(std::vector<double>{1e3, -1e3, 1e30, -1e30, 12, -12, 0, 1e-30, 1, -1, 2, -2, -5}, {13})
                   .to(DType::Float32);
  Tensor ones = full({13}, 1.0, DType::Float32);
  for (bool simd : {true, false}) {
    std::vector<double> d = (simd ? cpu::gelu_backward(ones, big) : cpu::gelu_backward_scalar(ones, big)).to_vector<double>();
    EXPECT_EQ(d[0], 1.0);
    EXPECT_EQ(d[1], 0.0);
    EXPECT_EQ(d[2], 1.0);
    EXPECT_EQ(d[3], 0.0);
    EXPECT_NEAR(d[6], 0.5, 1e-7);
    for (size_t i = 8; i < d.size(); ++i) EXPECT_NEAR(d[i], dgelu_erf(big.to_vector<double>()[i]), 1e-6) << i;
  }
}

TEST(GeluBackward, HalfInputsComputeInFloat32) {
  for (DType h : {DType::BFloat16, DType::Float16}) {
    Tensor x = (3.0 * random({300}, 11)).to(h), g = random({300}, 12).to(h);
    Tensor want = reference_erf(g.to(DType::Float64), x.to(DType::Float64)).to(h).to(DType::Float64);
    Tensor got = cpu::gelu_backward(g, x);
    EXPECT_EQ(got.dtype(), h);
    EXPECT_TRUE(all_close(got.to(DType::Float64), want, 1e-2, 1e-2));
    EXPECT_EQ(cpu::gelu_tanh_backward(g, x).dtype(), h);
  }
}

// nn.GELU()'s default form: its backward runs the one-pass rule and gives the composite one's
// gradient, in float32 and in bfloat16 (which the fused rule widens instead of refusing).
TEST(GeluBackward, IsGelusFusedVjp) {
  Tensor x = (3.0 * random({6, 70}, 13)).to(DType::Float32).requires_grad_(), u = random({6, 70}, 14).to(DType::Float32);
  (gelu(x, false) * u).sum().backward();
  EXPECT_TRUE(all_close(x.grad(), reference_erf(u, x.detach()), 2e-6, 2e-5));
  for (bool tanh_form : {false, true}) {
    Tensor xb = x.detach().to(DType::BFloat16).requires_grad_();
    (gelu(xb, tanh_form) * u.to(DType::BFloat16)).sum().backward();
    ASSERT_TRUE(xb.grad().defined());
    EXPECT_EQ(xb.grad().dtype(), DType::BFloat16);
    Tensor want = tanh_form ? reference(u, x.detach()) : reference_erf(u, x.detach());
    EXPECT_TRUE(all_close(xb.grad().to(DType::Float64), want, 3e-2, 3e-2));
  }
}
