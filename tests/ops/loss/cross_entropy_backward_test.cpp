// The fused cross_entropy backward kernel (cpu/cross_entropy_kernels.h) against the float64
// definition (softmax - one_hot) * scale, on strided logits, float64 and float32, rows of 1 to
// 50257 classes (GPT-2's vocabulary), and through the op's gradient.
#include <cmath>

#include "framework/core/autograd/autograd.h"
#include "ops/loss/cpu/cross_entropy_kernels.h"
#include "ops/loss/cross_entropy.h"
#include "ops/reference.h"

using namespace ember;
using namespace ember::testing;

namespace {

// A strided view of shape s; rows of one element cannot be strided, so those come transposed.
Tensor strided_or_transposed(const Shape& s, uint64_t seed) {
  return s.back() > 1 ? strided_random(s, seed) : transposed_random(s, seed);
}

Tensor reference(const Tensor& logits, const Tensor& targets, double scale) {
  const int64_t c = logits.size(-1), rows = logits.numel() / c;
  std::vector<double> x = logits.contiguous().to_vector<double>(), out(x.size());
  std::vector<int64_t> t = targets.contiguous().to_vector<int64_t>();
  for (int64_t r = 0; r < rows; ++r) {
    double m = -INFINITY, s = 0;
    for (int64_t k = 0; k < c; ++k) m = std::max(m, x[size_t(r * c + k)]);
    for (int64_t k = 0; k < c; ++k) s += std::exp(x[size_t(r * c + k)] - m);
    for (int64_t k = 0; k < c; ++k) out[size_t(r * c + k)] = std::exp(x[size_t(r * c + k)] - m) / s * scale;
    out[size_t(r * c + t[size_t(r)])] -= scale;
  }
  return from_vector(out, logits.shape());
}

Tensor random_targets(const Shape& s, int64_t classes, uint64_t seed) {
  Generator gen(seed);
  std::vector<int64_t> v;
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  for (int64_t i = 0; i < n; ++i) v.push_back(int64_t(gen.next_u64() % uint64_t(classes)));
  return from_vector(v, s);
}

}  // namespace

TEST(CrossEntropyBackward, FusedKernelMatchesFloat64Reference) {
  uint64_t seed = 70;
  for (Shape s : {Shape{1, 1}, Shape{3, 7}, Shape{2, 5, 33}, Shape{2, 50257}}) {
    Shape lead(s.begin(), s.end() - 1);
    Tensor targets = random_targets(lead, s.back(), seed);
    for (int layout = 0; layout < 2; ++layout) {
      Tensor logits = (layout == 0 ? random(s, seed += 3) : strided_or_transposed(s, seed += 3)) * 4.0;
      const double scale = 0.37 / double(targets.numel());
      Tensor want = reference(logits, targets, scale);
      SCOPED_TRACE(str("shape ", to_string(s), " layout ", layout));
      EXPECT_TRUE(all_close(cpu::cross_entropy_backward(logits, targets, scale), want, 1e-15, 1e-12));
      EXPECT_TRUE(all_close(cpu::cross_entropy_backward(logits.to(DType::Float32), targets, scale).to(DType::Float64), want,
                            1e-8, 1e-5));
    }
  }
}

TEST(CrossEntropyBackward, OpGradientIsTheFusedKernelScaledByTheIncomingGradient) {
  Tensor logits = random({6, 11}, 5), targets = random_targets({6}, 11, 6);
  Tensor g = grad([&](const Tensor& x) { return cross_entropy(x, targets) * 2.5; })(logits);
  EXPECT_TRUE(all_close(g, reference(logits, targets, 2.5 / 6.0), 1e-15, 1e-12));
}

TEST(CrossEntropyBackward, OutOfRangeTargetRaises) {
  EXPECT_THROW(cpu::cross_entropy_backward(random({2, 3}, 1), from_vector(std::vector<int64_t>{0, 3}, {2}), 1.0), Error);
}
