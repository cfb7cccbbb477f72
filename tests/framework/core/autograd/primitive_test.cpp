// The engine of framework/core/autograd/primitive.h, on small primitives declared here: what a node
// keeps for its VJP, when kernels are told their extras will be read, and the fused-or-composite
// choice. (Every built-in op goes through the same engine in tests/ops/op_table_test.cpp.)
#include "framework/core/autograd/primitive.h"

#include "ember.h"
#include "test_util.h"

using namespace ember;
using namespace ember::testing;

namespace {

// a * b + c, saving only b. It declares no gradient for b (that would read a, which it does not
// keep), so b is never a traced input here.
struct Probe {
  int extras_seen = 0, calls = 0, fused_calls = 0;
};
Probe& probe() {
  static Probe p;
  return p;
}

const Primitive<>& fma_op() {
  static const Primitive<> p = Primitive<>("test_fma_saves_b", /*builtin=*/false)
                                   .cpu([](const Args& x, const NoAttrs&) {
                                     ++probe().calls;
                                     if (extras_wanted()) ++probe().extras_seen;
                                     return KernelOut(x[0] * x[1] + x[2]);
                                   })
                                   .saves({1}, false)
                                   .vjp([](const Tensor& g, const OpCall<>& c) {
                                     EXPECT_FALSE(c.in[0].defined());  // not declared: not kept
                                     EXPECT_FALSE(c.in[2].defined());
                                     EXPECT_FALSE(c.out.defined());
                                     return Grads{g * c.in[1], Tensor(), g};
                                   })
                                   .fused_vjp(Device::CPU, [](const Tensor& g, const OpCall<>& c) {
                                     ++probe().fused_calls;
                                     return Grads{g * c.in[1], Tensor(), g};
                                   });
  return p;
}

}  // namespace

TEST(Primitive, NodeKeepsOnlyTheDeclaredSaves) {
  Tensor a = randn({3, 4}, DType::Float64), b = randn({3, 4}, DType::Float64), c = randn({3, 4}, DType::Float64);
  auto [y, vjp] = make_vjp(
      [&](const std::vector<Tensor>& in) { return std::vector<Tensor>{fma_op()({in[0], b, in[1]})}; }, {a, c});
  ASSERT_TRUE(all_close(y[0], a * b + c));
  Tensor g = randn({3, 4}, DType::Float64);
  std::vector<Tensor> gs = vjp({g});
  EXPECT_TRUE(all_close(gs[0], g * b));
  EXPECT_TRUE(all_close(gs[1], g));
}

TEST(Primitive, KernelsAreToldWhenTheirExtrasWillBeRead) {
  Tensor a = randn({5}), b = randn({5}), c = randn({5});
  probe() = Probe{};
  EXPECT_FALSE(extras_wanted());
  fma_op()({a, b, c});  // not recorded
  EXPECT_EQ(probe().calls, 1);
  EXPECT_EQ(probe().extras_seen, 0);
  make_vjp([&](const std::vector<Tensor>& in) { return std::vector<Tensor>{fma_op()({in[0], b, c})}; }, {a});
  EXPECT_EQ(probe().calls, 2);
  EXPECT_EQ(probe().extras_seen, 1);
  EXPECT_FALSE(extras_wanted());  // reset when the application returns
}

TEST(Primitive, FusedBackwardServesOnlyFirstOrderGradients) {
  Tensor a = randn({4}, DType::Float64), b = randn({4}, DType::Float64), c = randn({4}, DType::Float64);
  auto f = [&](const Tensor& x) { return sum(fma_op()({x, b, c})); };
  probe() = Probe{};
  Tensor g1 = grad(f)(a);  // nothing the rule reads is traced: the fused kernel serves
  EXPECT_EQ(probe().fused_calls, 1);
  EXPECT_TRUE(all_close(g1, b));
  {
    FusedBackwardGuard off(false);
    Tensor g2 = grad(f)(a);
    EXPECT_EQ(probe().fused_calls, 1);  // the composite rule served
    EXPECT_TRUE(all_close(g2, b));
  }
  // A gradient that is itself differentiated: b, which the rule reads, is traced by the outer
  // trace, so the composite rule must serve (the fused kernel would record nothing there).
  auto outer = [&](const Tensor& bb) {
    Tensor gx = grad([&](const Tensor& x) { return sum(fma_op()({x, bb, c})); })(a);  // = bb
    return sum(gx * bb);
  };
  Tensor gg = grad(outer)(b);
  EXPECT_EQ(probe().fused_calls, 1);
  EXPECT_TRUE(all_close(gg, 2.0 * b));
}

TEST(Primitive, GraphReleasesSavedTensorsAfterEagerBackward) {
  Tensor a = randn({6}).requires_grad_(), b = randn({6}), c = randn({6});
  Tensor y = sum(fma_op()({a, b, c}));
  const long held = b.impl_ptr().use_count();  // b itself, and the node's saved copy
  y.backward();
  EXPECT_TRUE(all_close(a.grad(), b));
  EXPECT_EQ(b.impl_ptr().use_count(), held - 1);
  EXPECT_EMBER_ERROR(y.backward(), "already freed");
}

TEST(Primitive, AllDevicesDeclaresOneKernelForEveryDevice) {
  static const Primitive<> p = Primitive<>("test_all_devices", /*builtin=*/false)
                                   .all_devices([](const Args& x, const NoAttrs&) { return KernelOut(x[0] * 2.0); })
                                   .vjp([](const Tensor& g, const OpCall<>&) { return Grads{g * 2.0}; });
  EXPECT_TRUE(p.info().kernel[size_t(Device::CPU)]);
  EXPECT_TRUE(p.info().kernel[size_t(Device::CUDA)]);
  Tensor x = random({3}, 1);
  EXPECT_TRUE(all_close(p({x}), x * 2.0, 0, 0));
}
