// The custom-op path end to end: the example's fused softplus (examples/custom_op/softplus_op.h)
// and two ops defined here, one without a JVP rule (forward mode transposes its VJP).
#include <algorithm>
#include <cmath>

#include "examples/custom_op/softplus_op.h"
#include "framework/core/custom_op.h"
#include "ops/row_reference.h"  // transposed_random
#include "test_util.h"

using namespace ember;
using namespace ember::testing;
using softplus_example::softplus_fused;

namespace {

// swish(x) = x * sigmoid(x), with a CPU kernel and a VJP only.
const CustomOp& swish_op() {
  static const CustomOp op =
      CustomOp("test_swish")
          .cpu([](const std::vector<Tensor>& in) {
            Tensor x = in[0].to(DType::Float64).contiguous();
            std::vector<double> v = x.to_vector<double>();
            for (double& e : v) e = e / (1 + std::exp(-e));
            return from_vector(v, x.shape()).to(in[0].dtype());
          })
          .vjp([](const Tensor& g, int, const std::vector<Tensor>& in, const Tensor&) {
            Tensor s = sigmoid(in[0]);
            return g * (s + in[0] * s * (1.0 - s));
          });
  return op;
}

// a * tanh(b): two inputs, VJP only.
const CustomOp& mul_tanh_op() {
  static const CustomOp op =
      CustomOp("test_mul_tanh")
          .cpu([](const std::vector<Tensor>& in) { return in[0] * tanh(in[1]); })  // raw inputs: plain ops compute
          .vjp([](const Tensor& g, int i, const std::vector<Tensor>& in, const Tensor&) {
            Tensor t = tanh(in[1]);
            return i == 0 ? g * t : g * in[0] * (1.0 - t * t);
          });
  return op;
}

double ref_softplus(double x) { return std::log1p(std::exp(-std::abs(x))) + std::max(x, 0.0); }

}  // namespace

TEST(CustomOp, SoftplusForwardMatchesReference) {
  uint64_t seed = 500;
  for (Shape s : {Shape{1}, Shape{7}, Shape{33, 3}, Shape{2, 127}, Shape{}}) {
    Tensor x = random(s, seed++) * 10.0;
    std::vector<double> xv = x.to_vector<double>(), yv = softplus_fused(x).to_vector<double>();
    for (size_t i = 0; i < xv.size(); ++i) EXPECT_NEAR(yv[i], ref_softplus(xv[i]), 1e-15 * (1 + std::abs(xv[i])));
    EXPECT_TRUE(all_close(softplus_fused(x), softplus_example::softplus_composite(x), 1e-14, 1e-13));
  }
  Tensor xt = transposed_random({4, 9}, 510);
  EXPECT_TRUE(all_close(softplus_fused(xt), softplus_fused(xt.contiguous()), 0, 0));
  EXPECT_TRUE(all_close(softplus_fused(xt.to(DType::Float32)), softplus_fused(xt), 1e-6, 1e-6));
  EXPECT_EQ(softplus_fused(xt.to(DType::Float32)).dtype(), DType::Float32);
  // Large inputs: no overflow to inf.
  EXPECT_NEAR(softplus_fused(scalar(800.0, DType::Float64)).item(), 800.0, 1e-12);
  EXPECT_NEAR(softplus_fused(scalar(-800.0, DType::Float64)).item(), 0.0, 1e-300);
}

TEST(CustomOp, RecordsOneNodeLikeABuiltinOp) {
  Tensor x = random({2, 3}, 520).requires_grad_();
  Tensor y = softplus_fused(x);
  ASSERT_TRUE(y.is_traced());
  EXPECT_STREQ(y.impl()->node->op, "softplus");
  ASSERT_EQ(y.impl()->node->parents.size(), 1u);
  EXPECT_TRUE(y.impl()->node->parents[0]->is_leaf);
  sum(y).backward();
  EXPECT_TRUE(all_close(x.grad(), sigmoid(x.detach()), 1e-15, 1e-14));
  auto names = custom_op_names();
  EXPECT_NE(std::find(names.begin(), names.end(), "softplus"), names.end());
  {  // no_grad: the kernel runs and nothing is recorded
    autograd::NoGradGuard ng;
    EXPECT_FALSE(softplus_fused(x).is_traced());
  }
}

TEST(CustomOp, SoftplusGradcheck) {
  auto f = [](const std::vector<Tensor>& a) { return softplus_fused(a[0]); };
  EXPECT_TRUE(grad_ok(f, {random({3, 4}, 530) * 3.0}));
  EXPECT_TRUE(grad_ok(f, {transposed_random({3, 4}, 531)}));
  EXPECT_TRUE(grad_ok(f, {random({2, 3, 2}, 532)}));
  // Inside a larger function.
  EXPECT_TRUE(grad_ok([](const std::vector<Tensor>& a) { return sum(softplus_fused(matmul(a[0], a[1])), {1}); },
                      {random({2, 3}, 533), random({3, 2}, 534)}));
}

TEST(CustomOp, SoftplusGradOfGrad) {
  auto f = [](const Tensor& x) { return sum(softplus_fused(x) * softplus_fused(x)); };
  Tensor x = random({2, 4}, 540);
  EXPECT_TRUE(grad_ok([f](const std::vector<Tensor>& a) { return grad(f)(a[0]); }, {x}));
  // d2/dx2 softplus = sigmoid(x)(1 - sigmoid(x)), elementwise.
  Tensor x1 = random({5}, 541);
  Tensor h = grad([](const Tensor& z) { return sum(grad([](const Tensor& w) { return sum(softplus_fused(w)); })(z)); })(x1);
  Tensor s = sigmoid(x1);
  EXPECT_TRUE(all_close(h, s * (1.0 - s), 1e-15, 1e-13));
}

TEST(CustomOp, JvpDerivedFromTheVjpWhenNotGiven) {
  EXPECT_FALSE(swish_op().has_jvp());
  EXPECT_TRUE(softplus_example::softplus_op().has_jvp());
  auto sw = [](const std::vector<Tensor>& a) { return swish_op()(a[0]); };
  Tensor x = random({3, 4}, 550);
  EXPECT_TRUE(all_close(sw({x}), x * sigmoid(x), 1e-15, 1e-14));
  EXPECT_TRUE(grad_ok(sw, {x}));  // checks the JVP (transposed VJP) against finite differences too
  EXPECT_TRUE(grad_ok(sw, {transposed_random({3, 4}, 551)}));
  auto mt = [](const std::vector<Tensor>& a) { return mul_tanh_op()({a[0], a[1]}); };
  EXPECT_TRUE(grad_ok(mt, {random({2, 3}, 552), random({2, 3}, 553)}));
  // Only one input traced: the other stays a constant.
  Tensor c = random({2, 3}, 554);
  EXPECT_TRUE(grad_ok([c](const std::vector<Tensor>& a) { return mul_tanh_op()({c, a[0]}); }, {random({2, 3}, 555)}));
  // Forward over reverse through a derived JVP: a Hessian-vector product.
  Tensor v = random({3, 4}, 556);
  auto g = [](const Tensor& z) { return grad([](const Tensor& w) { return sum(swish_op()(w)); })(z); };
  Tensor hv = make_jvp(g, x, v).second;
  Tensor s = sigmoid(x);
  EXPECT_TRUE(all_close(hv, v * (s * (1.0 - s) * (2.0 + x * (1.0 - 2.0 * s))), 1e-12, 1e-10));
}

TEST(CustomOp, BadDefinitionsAndInputs) {
  EXPECT_EMBER_ERROR(CustomOp(""), "CustomOp: the name must not be empty");
  CustomOp no_kernel("test_no_kernel");
  EXPECT_EMBER_ERROR(no_kernel({random({2}, 1)}), "custom op 'test_no_kernel': no cpu kernel was given");
  CustomOp no_vjp = CustomOp("test_no_vjp").cpu([](const std::vector<Tensor>& in) { return in[0] * 2.0; });
  Tensor x = random({2, 2}, 2);
  EXPECT_TRUE(all_close(no_vjp({x}), x * 2.0, 0, 0));  // fine untraced
  EXPECT_EMBER_ERROR(grad([&](const Tensor& z) { return sum(no_vjp({z})); })(x),
                     "custom op 'test_no_vjp': no VJP rule was given");
  EXPECT_EMBER_ERROR(make_jvp([&](const Tensor& z) { return no_vjp({z}); }, x, x), "neither a JVP nor a VJP rule");
  CustomOp bad_vjp = CustomOp("test_bad_vjp")
                         .cpu([](const std::vector<Tensor>& in) { return in[0] * 2.0; })
                         .vjp([](const Tensor& g, int, const std::vector<Tensor>&, const Tensor&) { return sum(g); });
  EXPECT_EMBER_ERROR(grad([&](const Tensor& z) { return sum(bad_vjp({z})); })(x),
                     "custom op 'test_bad_vjp': the vjp rule returned float64[] for input 0, expected float64[2, 2]");
  CustomOp bad_jvp = CustomOp("test_bad_jvp")
                         .cpu([](const std::vector<Tensor>& in) { return in[0] * 2.0; })
                         .jvp([](const std::vector<Tensor>& t, const std::vector<Tensor>&, const Tensor&) {
                           return t[0].to(DType::Float32);
                         });
  EXPECT_EMBER_ERROR(make_jvp([&](const Tensor& z) { return bad_jvp({z}); }, x, x),
                     "custom op 'test_bad_jvp': the jvp rule returned float32[2, 2] for the output 0, expected float64[2, 2]");
  EXPECT_EMBER_ERROR(softplus_fused(Tensor()), "custom op 'softplus': input 0 is undefined");
  EXPECT_EMBER_ERROR(softplus_fused(arange(3)), "softplus: got int64, accepts float32, float64");
}
