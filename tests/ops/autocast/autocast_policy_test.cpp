// What autocast does to ops (ops/autocast/autocast_policy.cpp): the matmul family computes in the
// scope's half dtype and matches a float64 reference within its rounding; the float32 ops return
// float32 for half inputs; float64 is left alone; gradients reach float32 leaves in float32 and
// agree with float32 training within bf16 tolerance; off (by default or enabled = false) changes
// nothing, bit for bit.
#include "ops/autocast/autocast_policy.h"

#include <algorithm>
#include <cmath>

#include "test_util.h"

using namespace ember;
using ember::testing::all_close;

namespace {

Tensor f32(const Shape& s, uint64_t seed, double scale = 1.0) {
  return (ember::testing::random(s, seed) * scale).to(DType::Float32);
}

bool same_bits(const Tensor& a, const Tensor& b) {
  return a.dtype() == b.dtype() && a.shape() == b.shape() && a.to_vector<double>() == b.to_vector<double>();
}

double rel_err(const Tensor& got, const Tensor& want) {
  const std::vector<double> g = got.to_vector<double>(), w = want.to_vector<double>();
  double num = 0, den = 0;
  for (size_t i = 0; i < g.size(); ++i) num += (g[i] - w[i]) * (g[i] - w[i]), den += w[i] * w[i];
  return std::sqrt(num / den);
}

// A two-layer MLP and its loss: linear, GELU, linear, cross-entropy, with every product in the
// lower-precision list and the loss in the float32 one.
struct Mlp {
  Tensor x = f32({9, 33}, 1), w1 = f32({17, 33}, 2, 0.3), b1 = f32({17}, 3, 0.1), w2 = f32({5, 17}, 4, 0.3);
  Tensor targets = from_vector(std::vector<int64_t>{0, 4, 2, 1, 3, 3, 0, 2, 4}, {9});

  // The loss and the gradients of x, w1, b1, w2 (fresh leaves each call), the forward pass run
  // under Guard(dtype, amp); the backward inside the scope where `backward_inside`.
  std::vector<Tensor> run(bool amp, DType dtype = DType::BFloat16, bool backward_inside = false) const {
    std::vector<Tensor> leaves = {copy(x), copy(w1), copy(b1), copy(w2)};
    for (Tensor& t : leaves) t.requires_grad_();
    Tensor loss;
    {
      autocast::Guard g(dtype, amp);
      loss = cross_entropy(linear(gelu(linear(leaves[0], leaves[1], leaves[2]), true), leaves[3]), targets);
      if (backward_inside) loss.backward();
    }
    if (!backward_inside) loss.backward();
    std::vector<Tensor> out = {loss.detach()};
    for (const Tensor& t : leaves) out.push_back(t.grad());
    return out;
  }
};

}  // namespace

TEST(AutocastPolicy, ListsNameRegisteredPrimitivesOnce) {
  std::vector<std::string> lower = autocast::lower_precision_ops(), f = autocast::float32_ops();
  ASSERT_FALSE(lower.empty());
  ASSERT_FALSE(f.empty());
  for (const auto& n : lower) {
    EXPECT_TRUE(find_primitive(n)) << n;
    EXPECT_EQ(std::count(f.begin(), f.end(), n), 0) << n << " is in both lists";
  }
  for (const auto& n : f) EXPECT_TRUE(find_primitive(n)) << n;
}

TEST(AutocastPolicy, MatmulComputesInBf16WithinItsRounding) {
  const Tensor a64 = ember::testing::random({7, 33}, 11), b64 = ember::testing::random({33, 5}, 12);
  const Tensor a = a64.to(DType::Float32), b = b64.to(DType::Float32);
  Tensor y;
  {
    autocast::Guard g(DType::BFloat16);
    y = matmul(a, b);
  }
  ASSERT_EQ(y.dtype(), DType::BFloat16);
  // Against the float64 product of the bf16-rounded operands only the output's rounding (2^-8
  // relative: bf16 keeps 8 significant bits) and float32 accumulation remain; against the exact product the inputs' rounding adds
  // about sqrt(33) * 2^-8 of a unit term.
  const Tensor rounded = matmul(a.to(DType::BFloat16).to(DType::Float64), b.to(DType::BFloat16).to(DType::Float64));
  EXPECT_TRUE(all_close(y, rounded, 1e-4, 4e-3));
  EXPECT_TRUE(all_close(y, matmul(a64, b64), 0.1, 1e-2));
  EXPECT_FALSE(same_bits(y.to(DType::Float32), matmul(a, b)));  // it did round
}

TEST(AutocastPolicy, LinearAttentionAndFloat16) {
  const Tensor x = f32({2, 7, 16}, 21), w = f32({9, 16}, 22, 0.3), bias = f32({9}, 23);
  const Tensor q = f32({2, 3, 7, 8}, 24), k = f32({2, 3, 7, 8}, 25), v = f32({2, 3, 7, 8}, 26);
  AttentionOptions causal;
  causal.causal = true;
  Tensor yl, ya, yh;
  {
    autocast::Guard g(DType::BFloat16);
    yl = linear(x, w, bias);
    ya = attention(q, k, v, causal);
  }
  {
    autocast::Guard g(DType::Float16);
    yh = matmul(x, w.t());
  }
  EXPECT_EQ(yl.dtype(), DType::BFloat16);
  EXPECT_EQ(ya.dtype(), DType::BFloat16);
  EXPECT_EQ(yh.dtype(), DType::Float16);
  EXPECT_TRUE(all_close(yl, linear(x.to(DType::Float64), w.to(DType::Float64), bias.to(DType::Float64)), 0.05, 1e-2));
  EXPECT_TRUE(all_close(ya, attention(q.to(DType::Float64), k.to(DType::Float64), v.to(DType::Float64), causal), 0.03, 1e-2));
  EXPECT_TRUE(all_close(yh, matmul(x.to(DType::Float64), w.t().to(DType::Float64)), 0.01, 2e-3));
}

TEST(AutocastPolicy, MixedDtypesUnifyInsideTheScopeOnly) {
  const Tensor a = f32({4, 6}, 31).to(DType::BFloat16), b = f32({6, 3}, 32);
  EXPECT_EMBER_ERROR(matmul(a, b), "dtype mismatch");
  autocast::Guard g(DType::BFloat16);
  Tensor y = matmul(a, b);
  EXPECT_EQ(y.dtype(), DType::BFloat16);
  EXPECT_TRUE(same_bits(y, matmul(a, b.to(DType::BFloat16))));
  // A half and a float32 operand of an op in neither list promote to float32, as before.
  EXPECT_EQ(add(y, f32({4, 3}, 33)).dtype(), DType::Float32);
}

TEST(AutocastPolicy, Float32OpsReturnFloat32ForHalfInputs) {
  const Tensor x = f32({6, 33}, 41).to(DType::BFloat16), xf = x.to(DType::Float32);
  const Tensor w = f32({33}, 42), b = f32({33}, 43);
  const Tensor t = from_vector(std::vector<int64_t>{0, 32, 5, 7, 1, 20}, {6});
  autocast::Guard g(DType::BFloat16);
  struct Case {
    const char* name;
    Tensor got, want;
  };
  // The cast up is exact, so each equals the float32 op on the widened input bit for bit.
  for (const Case& c : {Case{"softmax", softmax(x), softmax(xf)}, Case{"log_softmax", log_softmax(x), log_softmax(xf)},
                        Case{"logsumexp", logsumexp(x), logsumexp(xf)},
                        Case{"cross_entropy", cross_entropy(x, t), cross_entropy(xf, t)},
                        Case{"layer_norm", layer_norm(x, w, b), layer_norm(xf, w, b)},
                        Case{"layer_norm half params", layer_norm(xf, w.to(DType::BFloat16), b), layer_norm(xf, w.to(DType::BFloat16).to(DType::Float32), b)},
                        Case{"sum", sum(x, {1}), sum(xf, {1})}, Case{"mean", mean(x), mean(xf)}}) {
    EXPECT_EQ(c.got.dtype(), DType::Float32) << c.name;
    EXPECT_TRUE(same_bits(c.got, c.want)) << c.name;
  }
  // Ops in neither list keep the half dtype.
  EXPECT_EQ(gelu(x, true).dtype(), DType::BFloat16);
}

TEST(AutocastPolicy, Float64IsLeftAlone) {
  const Tensor a = ember::testing::random({5, 7}, 51), b = ember::testing::random({7, 4}, 52);
  const Tensor plain = matmul(a, b);
  autocast::Guard g(DType::BFloat16);
  EXPECT_TRUE(same_bits(matmul(a, b), plain));
  EXPECT_EMBER_ERROR(matmul(a, b.to(DType::Float32)), "autocast: matmul got inputs of float64 and bfloat16");
}

TEST(AutocastPolicy, GradientsReachFloat32LeavesInFloat32) {
  const Mlp m;
  const std::vector<Tensor> ref = m.run(false), amp = m.run(true);
  EXPECT_EQ(amp[0].dtype(), DType::Float32);  // the loss
  EXPECT_NEAR(amp[0].item(), ref[0].item(), 2e-2 * std::abs(ref[0].item()));
  const char* names[] = {"loss", "x", "w1", "b1", "w2"};
  for (size_t i = 1; i < ref.size(); ++i) {
    ASSERT_TRUE(amp[i].defined()) << names[i];
    EXPECT_EQ(amp[i].dtype(), DType::Float32) << names[i];
    EXPECT_LT(rel_err(amp[i], ref[i]), 3e-2) << names[i];
    EXPECT_GT(rel_err(amp[i], ref[i]), 0.0) << names[i] << ": bf16 changed nothing";
  }
  // backward() inside the scope runs the same rules in the same dtypes.
  const std::vector<Tensor> inside = m.run(true, DType::BFloat16, /*backward_inside=*/true);
  for (size_t i = 0; i < amp.size(); ++i) EXPECT_TRUE(same_bits(inside[i], amp[i])) << names[i];
  // float16 too.
  const std::vector<Tensor> half = m.run(true, DType::Float16);
  for (size_t i = 1; i < ref.size(); ++i) EXPECT_LT(rel_err(half[i], ref[i]), 1e-2) << names[i];
}

TEST(AutocastPolicy, OffChangesNothingBitForBit) {
  const Mlp m;
  const std::vector<Tensor> plain = m.run(false);
  const std::vector<Tensor> disabled = [&] {
    autocast::Guard outer(DType::BFloat16);  // an enabled scope around a disabled one
    return m.run(false);
  }();
  {
    autocast::Guard used(DType::BFloat16);  // a scope opened and closed before
    (void)m.run(true);
  }
  const std::vector<Tensor> after = m.run(false);
  for (size_t i = 0; i < plain.size(); ++i) {
    EXPECT_TRUE(same_bits(disabled[i], plain[i])) << i;
    EXPECT_TRUE(same_bits(after[i], plain[i])) << i;
  }
}
