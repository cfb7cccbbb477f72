// Autograd: make_vjp with several inputs and outputs, accumulation through fan-out, grad /
// value_and_grad(s), make_jvp, higher order (grad of grad, a Hessian-vector product against finite
// differences), PyTorch-style backward on requires_grad_ leaves, no_grad, nesting, and errors.
#include <map>
#include "ops/reference.h"

using namespace ember;
using namespace ember::testing;

namespace {
Tensor f64(std::vector<double> v, Shape s = {}) { return from_vector(v, s); }
}  // namespace

TEST(AutogradVjp, SeveralInputsAndOutputs) {
  Tensor a = random({2, 3}, 1), b = random({3}, 2), c = random({2, 3}, 3);
  auto [ys, vjp] = make_vjp(
      [](const std::vector<Tensor>& in) {
        return std::vector<Tensor>{in[0] * in[1], sum(in[0] + in[2], {1}), exp(in[1])};
      },
      {a, b, c});
  ASSERT_EQ(ys.size(), 3u);
  EXPECT_FALSE(ys[0].is_traced());  // outputs come back unboxed
  EXPECT_TRUE(all_close(ys[0], ref_binary(a, b, [](double x, double y) { return x * y; })));
  Tensor g0 = random({2, 3}, 4), g1 = random({2}, 5), g2 = random({3}, 6);
  std::vector<Tensor> gs = vjp({g0, g1, g2});
  ASSERT_EQ(gs.size(), 3u);
  // d/da: g0 * b + g1 broadcast over columns; d/db: sum_rows(g0 * a) + g2 * exp(b); d/dc: g1 broadcast.
  Tensor ga = ref_tensor({2, 3}, [&](const Shape& i) { return g0.at(i) * b.at({i[1]}) + g1.at({i[0]}); });
  Tensor gb = ref_tensor({3}, [&](const Shape& j) {
    double s = 0;
    for (int64_t r = 0; r < 2; ++r) s += g0.at({r, j[0]}) * a.at({r, j[0]});
    return s + g2.at(j) * std::exp(b.at(j));
  });
  Tensor gc = ref_tensor({2, 3}, [&](const Shape& i) { return g1.at({i[0]}); });
  EXPECT_TRUE(all_close(gs[0], ga, 1e-12));
  EXPECT_TRUE(all_close(gs[1], gb, 1e-12));
  EXPECT_TRUE(all_close(gs[2], gc, 1e-12));
  // The VJP can be called again with other cotangents (the graph is kept).
  std::vector<Tensor> again = vjp({zeros({2, 3}, DType::Float64), zeros({2}, DType::Float64), ones({3}, DType::Float64)});
  EXPECT_TRUE(all_close(again[1], exp(b), 1e-12));
  EXPECT_TRUE(all_close(again[0], zeros({2, 3}, DType::Float64)));
}

TEST(AutogradVjp, FanOutAndReusedSubexpressions) {
  // y = u * u + sin(u) * x with u = x * x: u fans out three ways and x two ways.
  auto f = [](const Tensor& x) {
    Tensor u = x * x;
    return u * u + sin(u) * x;
  };
  Tensor x = random({5}, 7);
  auto [y, vjp] = make_vjp(f, x);
  Tensor g = random({5}, 8);
  Tensor expect = ref_tensor({5}, [&](const Shape& i) {
    double v = x.at(i), u = v * v;
    return g.at(i) * (4 * v * v * v + std::cos(u) * 2 * v * v + std::sin(u));
  });
  EXPECT_TRUE(all_close(vjp(g), expect, 1e-12));
  // The same tensor returned twice as two outputs gets both cotangents.
  auto [ys, vjp2] = make_vjp([](const std::vector<Tensor>& in) {
    Tensor t = in[0] * 3.0;
    return std::vector<Tensor>{t, t};
  }, {x});
  Tensor g1 = random({5}, 9), g2 = random({5}, 10);
  EXPECT_TRUE(all_close(vjp2({g1, g2})[0], (g1 + g2) * 3.0, 1e-12));
  // An input used twice by the same primitive.
  Tensor sq = grad([](const Tensor& v) { return sum(v * v); })(x);
  EXPECT_TRUE(all_close(sq, 2.0 * x, 1e-12));
}

TEST(AutogradVjp, UnusedInputsGetZeros) {
  Tensor a = random({2, 2}, 11), b = random({3}, 12);
  auto [ys, vjp] = make_vjp([](const std::vector<Tensor>& in) { return std::vector<Tensor>{in[0] * 2.0}; }, {a, b});
  std::vector<Tensor> gs = vjp({ones({2, 2}, DType::Float64)});
  EXPECT_TRUE(all_close(gs[0], full({2, 2}, 2.0, DType::Float64)));
  EXPECT_EQ(gs[1].shape(), (Shape{3}));
  EXPECT_TRUE(all_close(gs[1], zeros({3}, DType::Float64)));
  // An output that depends on no input at all: its VJP is zeros everywhere.
  auto [ys2, vjp2] = make_vjp([](const std::vector<Tensor>& in) { return std::vector<Tensor>{ones({2}, DType::Float64)}; },
                              {a});
  EXPECT_TRUE(all_close(vjp2({ones({2}, DType::Float64)})[0], zeros({2, 2}, DType::Float64)));
  // The identity function: the cotangent passes straight through.
  auto [yid, vjpid] = make_vjp([](const Tensor& x) { return x; }, b);
  Tensor g = random({3}, 13);
  EXPECT_TRUE(all_close(vjpid(g), g));
}

TEST(AutogradGrad, GradValueAndGradValueAndGrads) {
  auto f = [](const Tensor& x) { return sum(sin(x) * x); };
  Tensor x = random({4}, 14);
  Tensor expect = ref_unary(x, [](double v) { return std::cos(v) * v + std::sin(v); });
  EXPECT_TRUE(all_close(grad(f)(x), expect, 1e-12));
  auto [v, g] = value_and_grad(f)(x);
  EXPECT_NEAR(v.item(), sum(sin(x) * x).item(), 1e-12);
  EXPECT_TRUE(all_close(g, expect, 1e-12));

  FnN h = [](const std::vector<Tensor>& in) { return sum(in[0] * in[1] * in[1]); };
  Tensor a = random({3}, 15), b = random({3}, 16);
  EXPECT_TRUE(all_close(grad(h, 0)({a, b}), b * b, 1e-12));
  EXPECT_TRUE(all_close(grad(h, 1)({a, b}), 2.0 * a * b, 1e-12));
  auto [hv, hg] = value_and_grads(h)({a, b});
  EXPECT_NEAR(hv.item(), sum(a * b * b).item(), 1e-12);
  ASSERT_EQ(hg.size(), 2u);
  EXPECT_TRUE(all_close(hg[0], b * b, 1e-12));
  EXPECT_TRUE(all_close(hg[1], 2.0 * a * b, 1e-12));
  EXPECT_EMBER_ERROR(grad(h, 2)({a, b}), "argnum");
  // A one-element output of any rank is accepted.
  EXPECT_TRUE(all_close(grad([](const Tensor& t) { return sum(t, {}, true); })(a), ones({3}, DType::Float64)));
}

TEST(AutogradJvp, ForwardModeMatchesReference) {
  auto f = [](const std::vector<Tensor>& in) {
    return std::vector<Tensor>{in[0] * exp(in[1]), sum(in[0] * in[0])};
  };
  Tensor a = random({3}, 17), b = random({3}, 18), va = random({3}, 19), vb = random({3}, 20);
  auto [ys, ts] = make_jvp(f, {a, b}, {va, vb});
  ASSERT_EQ(ts.size(), 2u);
  EXPECT_TRUE(all_close(ys[0], a * exp(b), 1e-12));
  Tensor t0 = ref_tensor({3}, [&](const Shape& i) {
    return (va.at(i) + a.at(i) * vb.at(i)) * std::exp(b.at(i));
  });
  EXPECT_TRUE(all_close(ts[0], t0, 1e-12));
  double t1 = 0;
  for (int64_t i = 0; i < 3; ++i) t1 += 2 * a.at({i}) * va.at({i});
  EXPECT_NEAR(ts[1].item(), t1, 1e-12);
  // Single input: tangent of tanh.
  auto [y, t] = make_jvp([](const Tensor& x) { return tanh(x); }, a, va);
  EXPECT_TRUE(all_close(t, ref_tensor({3}, [&](const Shape& i) {
    double th = std::tanh(a.at(i));
    return (1 - th * th) * va.at(i);
  }), 1e-12));
  // An output that does not depend on the inputs has a zero tangent.
  auto [yc, tc] = make_jvp([](const Tensor&) { return ones({2}, DType::Float64); }, a, va);
  EXPECT_TRUE(all_close(tc, zeros({2}, DType::Float64)));
  EXPECT_EMBER_ERROR(make_jvp(f, {a, b}, {va}), "make_jvp");
  EXPECT_EMBER_ERROR(make_jvp(f, {a, b}, {va, random({4}, 1)}), "make_jvp");
  EXPECT_EMBER_ERROR(make_jvp(f, {a, b}, {va, vb.to(DType::Float32)}), "make_jvp");
}

TEST(AutogradHigherOrder, GradOfGrad) {
  auto f = [](const Tensor& x) { return sum(sin(x) * x * x); };
  Tensor x = random({4}, 21);
  Tensor g2 = grad([&](const Tensor& v) { return sum(grad(f)(v)); })(x);
  // d/dx (cos x x^2 + 2x sin x) = -sin x x^2 + 4x cos x + 2 sin x
  Tensor expect = ref_unary(x, [](double v) { return -std::sin(v) * v * v + 4 * v * std::cos(v) + 2 * std::sin(v); });
  EXPECT_TRUE(all_close(g2, expect, 1e-10));
  // Third derivative of a scalar cubic.
  auto cube = [](const Tensor& v) { return v * v * v; };
  Tensor s = scalar(0.7, DType::Float64);
  EXPECT_NEAR(grad(grad(grad(cube)))(s).item(), 6.0, 1e-12);
  // Forward over reverse: the JVP of the gradient is a Hessian-vector product.
  Tensor v = random({4}, 22);
  auto [gx, hv] = make_jvp(grad(f), x, v);
  Tensor hdiag = ref_unary(x, [](double u) { return -std::sin(u) * u * u + 4 * u * std::cos(u) + 2 * std::sin(u); });
  EXPECT_TRUE(all_close(hv, hdiag * v, 1e-10));
}

TEST(AutogradHigherOrder, HessianVectorProductMatchesFiniteDifferences) {
  // A function with a dense Hessian: f(x) = sum(tanh(W x)^2) + (x . x)^2 / 4.
  Tensor W = random({3, 4}, 23);
  auto f = [&](const Tensor& x) {
    Tensor h = tanh(matmul(W, x));
    Tensor d = sum(x * x);
    return sum(h * h) + d * d * 0.25;
  };
  Tensor x = random({4}, 24), v = random({4}, 25);
  // Reverse over reverse: grad of <grad f(x), v>.
  Tensor hvp = grad([&](const Tensor& y) { return sum(grad(f)(y) * v); })(x);
  const double eps = 1e-5;
  Tensor fd = (grad(f)(x + v * eps) - grad(f)(x - v * eps)) / (2 * eps);
  EXPECT_TRUE(all_close(hvp, fd, 1e-7, 1e-6));
  // Forward over reverse agrees.
  EXPECT_TRUE(all_close(make_jvp(grad(f), x, v).second, hvp, 1e-10));
}

// ---------------------------------------------------------------- PyTorch-style leaves

TEST(AutogradEager, BackwardAccumulatesAndZeroGrad) {
  Tensor w = random({3}, 26);
  Tensor w0 = w;  // the raw value, before boxing
  w.requires_grad_();
  EXPECT_TRUE(w.requires_grad());
  EXPECT_FALSE(w0.requires_grad());
  EXPECT_FALSE(w.grad().defined());
  Tensor x = random({3}, 27);
  Tensor loss = sum(w * x * w);
  EXPECT_TRUE(loss.requires_grad());
  loss.backward();
  EXPECT_TRUE(all_close(w.grad(), 2.0 * w0 * x, 1e-12));
  EXPECT_FALSE(w.grad().requires_grad());
  // A second forward and backward accumulate.
  sum(w * 3.0).backward();
  EXPECT_TRUE(all_close(w.grad(), 2.0 * w0 * x + 3.0, 1e-12));
  w.zero_grad();
  EXPECT_FALSE(w.grad().defined());
  sum(exp(w)).backward();
  EXPECT_TRUE(all_close(w.grad(), exp(w0), 1e-12));
  // Turning it off leaves a plain tensor.
  w.requires_grad_(false);
  EXPECT_FALSE(w.requires_grad());
  EXPECT_FALSE(sum(w).requires_grad());
}

TEST(AutogradEager, SeveralLeavesAndExplicitCotangent) {
  Tensor a = random({2, 3}, 28), b = random({3}, 29);
  a.requires_grad_();
  b.requires_grad_();
  Tensor y = a * b + b;  // (2,3), b broadcast
  Tensor g = random({2, 3}, 30);
  y.backward(g);
  EXPECT_TRUE(all_close(a.grad(), g * b.detach(), 1e-12));
  EXPECT_TRUE(all_close(b.grad(), sum(g * a.detach(), {0}) + sum(g, {0}), 1e-12));
  EXPECT_EMBER_ERROR(y.backward(), "one element");
}

TEST(AutogradEager, LeafGradientsDoNotAlias) {
  // y = a + b hands the same cotangent to both leaves; their .grad must still be separate tensors
  // (optimizers and clipping write gradients in place).
  Tensor a = random({3}, 31), b = random({3}, 32);
  a.requires_grad_();
  b.requires_grad_();
  Tensor g = random({3}, 33);
  Tensor g_copy = g.clone();
  (a + b).backward(g);
  ASSERT_TRUE(a.grad().defined() && b.grad().defined());
  EXPECT_NE(a.grad().impl()->storage, b.grad().impl()->storage);
  EXPECT_NE(a.grad().impl()->storage, g.impl()->storage);
  a.grad().fill_(0);
  EXPECT_TRUE(all_close(b.grad(), g_copy));
  EXPECT_TRUE(all_close(g, g_copy));
}

TEST(AutogradEager, GraphIsFreedAfterBackward) {
  Tensor w = random({3}, 34);
  w.requires_grad_();
  Tensor loss = sum(sin(w) * w);
  loss.backward();
  EXPECT_EMBER_ERROR(loss.backward(), "already freed");
  // A fresh forward pass works again.
  sum(sin(w) * w).backward();
  EXPECT_TRUE(w.grad().defined());
}

TEST(AutogradEager, NoGradScopeRecordsNothing) {
  Tensor w = random({3}, 35);
  w.requires_grad_();
  {
    autograd::NoGradGuard guard;
    EXPECT_FALSE(autograd::grad_enabled());
    Tensor y = sum(w * w);
    EXPECT_FALSE(y.requires_grad());
    EXPECT_FALSE(y.is_traced());
    EXPECT_EMBER_ERROR(y.backward(), "backward");
    // make_vjp inside no_grad records nothing either: the gradient is zero.
    EXPECT_TRUE(all_close(grad([](const Tensor& x) { return sum(x * x); })(random({2}, 1)), zeros({2}, DType::Float64)));
    {
      autograd::NoGradGuard nested;
    }
    EXPECT_FALSE(autograd::grad_enabled());  // the inner guard restores the outer state
  }
  EXPECT_TRUE(autograd::grad_enabled());
  EXPECT_TRUE(sum(w * w).requires_grad());
}

TEST(AutogradEager, DetachCutsTheGraph) {
  Tensor w = random({3}, 36);
  w.requires_grad_();
  Tensor loss = sum(w * w.detach());
  loss.backward();
  EXPECT_TRUE(all_close(w.grad(), w.detach(), 1e-12));  // only one factor is differentiated
  EXPECT_FALSE(w.detach().is_traced());
}

TEST(AutogradEager, MakeVjpInsideEagerTraining) {
  // A parameter with requires_grad_ used inside a make_vjp function: make_vjp differentiates with
  // respect to its own input, while the eager trace still sees the parameter.
  Tensor w0 = random({3}, 37), x = random({3}, 38);
  Tensor w = w0;
  w.requires_grad_();
  auto [y, vjp] = make_vjp([&](const Tensor& xi) { return sum(xi * w * xi); }, x);
  EXPECT_TRUE(y.requires_grad());  // still depends on w through the eager trace
  EXPECT_NEAR(y.detach().item(), sum(x * w0 * x).item(), 1e-12);
  y.backward();
  EXPECT_TRUE(all_close(w.grad(), x * x, 1e-12));
  w.zero_grad();
  // The VJP's result is itself differentiable w.r.t. w (it was computed with w's boxed value),
  // also through views of w (a transpose inside the function).
  Tensor W0 = random({2, 3}, 39);
  Tensor W = W0;
  W.requires_grad_();
  auto [y2, vjp2] = make_vjp([&](const Tensor& xi) { return matmul(W.t().t(), xi); }, x);
  EXPECT_TRUE(y2.requires_grad());
  Tensor gx = vjp2(ones({2}, DType::Float64));  // W^T 1
  EXPECT_TRUE(all_close(gx.detach(), sum(W0, {0}), 1e-12));
  EXPECT_TRUE(gx.requires_grad());
  sum(gx * x).backward();  // d/dW of 1^T W x = 1 x^T
  EXPECT_TRUE(all_close(W.grad(), ones({2, 1}, DType::Float64) * x.reshape({1, 3}), 1e-12));
}

// ---------------------------------------------------------------- errors

TEST(AutogradErrors, GradOfNonScalar) {
  EXPECT_EMBER_ERROR(grad([](const Tensor& x) { return x * 2.0; })(random({3}, 1)), "grad");
  EXPECT_EMBER_ERROR(grad([](const Tensor& x) { return x * 2.0; })(random({3}, 1)), "[3]");
  EXPECT_EMBER_ERROR(value_and_grad([](const Tensor& x) { return x; })(random({2}, 1)), "one-element");
}

TEST(AutogradErrors, BadCotangents) {
  auto [ys, vjp] = make_vjp([](const std::vector<Tensor>& in) { return std::vector<Tensor>{in[0] * 2.0}; },
                            {random({2, 3}, 1)});
  EXPECT_EMBER_ERROR(vjp({ones({3, 2}, DType::Float64)}), "vjp");
  EXPECT_EMBER_ERROR(vjp({ones({3, 2}, DType::Float64)}), "[2, 3]");
  EXPECT_EMBER_ERROR(vjp({ones({2, 3}, DType::Float32)}), "float32");
  EXPECT_EMBER_ERROR(vjp({}), "expected 1 cotangents");
  EXPECT_EMBER_ERROR(vjp({Tensor()}), "undefined");
  Tensor w = random({2}, 2);
  w.requires_grad_();
  Tensor y = w * 2.0;
  EXPECT_EMBER_ERROR(y.backward(ones({3}, DType::Float64)), "backward");
  EXPECT_EMBER_ERROR(y.backward(ones({2}, DType::Float32)), "float32");
}

TEST(AutogradErrors, BackwardWithoutGrad) {
  Tensor x = random({2}, 3);
  EXPECT_EMBER_ERROR(sum(x).backward(), "backward");
  EXPECT_EMBER_ERROR(sum(x).backward(), "requires_grad_");
  EXPECT_EMBER_ERROR(arange(3).requires_grad_(), "requires_grad_");
  Tensor w = random({2}, 4);
  w.requires_grad_();
  EXPECT_EMBER_ERROR(make_vjp([](const Tensor& t) {
                       Tensor u = t * 2.0;
                       u.requires_grad_();
                       return u;
                     }, x), "leaf");
  EXPECT_EMBER_ERROR(make_vjp([](const Tensor&) { return Tensor(); }, x), "undefined");
  EXPECT_EMBER_ERROR(make_jvp([](const Tensor&) { return Tensor(); }, x, x), "undefined");
  EXPECT_EMBER_ERROR(make_vjp([](const Tensor& t) { return t; }, Tensor()), "undefined");
}

TEST(AutogradHigherOrder, ReverseOverForwardAndForwardOverForward) {
  auto f = [](const Tensor& x) { return sin(x) * x; };  // f' = cos x x + sin x, f'' = 2 cos x - x sin x
  Tensor x = random({4}, 50), v = random({4}, 51), w = random({4}, 52);
  auto f2 = [](double u) { return 2 * std::cos(u) - u * std::sin(u); };
  // Reverse over forward: d/dx sum(J v) = f''(x) v.
  Tensor g = grad([&](const Tensor& y) { return sum(make_jvp(f, y, v).second); })(x);
  EXPECT_TRUE(all_close(g, ref_unary(x, f2) * v, 1e-12));
  // Forward over forward: the tangent (along w) of the tangent (along v) is f''(x) v w.
  Tensor t2 = make_jvp([&](const Tensor& y) { return make_jvp(f, y, v).second; }, x, w).second;
  EXPECT_TRUE(all_close(t2, ref_unary(x, f2) * v * w, 1e-12));
  // gradcheck of a function defined through make_jvp checks its VJP and JVP.
  EXPECT_TRUE(grad_ok([&](const std::vector<Tensor>& in) { return make_jvp(f, in[0], v).second; }, {x}));
}

TEST(AutogradEager, MakeJvpWithARequiresGradParameter) {
  Tensor W0 = random({3}, 53), x = random({3}, 54), v = random({3}, 55);
  Tensor W = W0;
  W.requires_grad_();
  auto [y, t] = make_jvp([&](const Tensor& u) { return exp(u) * W; }, x, v);
  EXPECT_TRUE(all_close(t.detach(), v * exp(x) * W0, 1e-12));
  EXPECT_TRUE(y.requires_grad());
  EXPECT_TRUE(t.requires_grad());  // the tangent depends on W too
  sum(t).backward();
  EXPECT_TRUE(all_close(W.grad(), v * exp(x), 1e-12));
}

TEST(AutogradHigherOrder, SecondDerivativesThroughSelectAndJoin) {
  Generator gen(56);
  Tensor cond = randint({3, 4}, 0, 2, &gen);
  std::vector<std::pair<const char*, std::function<Tensor(const Tensor&)>>> fs = {
      {"where", [&](const Tensor& x) { return where(cond, x * x * x, sin(x)); }},
      {"masked_fill", [&](const Tensor& x) { return masked_fill(x * x * x, cond, 1.0); }},
      {"concat", [](const Tensor& x) { return concat({x * x, exp(x)}, 1); }},
      {"split", [](const Tensor& x) { auto p = split(x, 2, 1); return p[0] * p[1] * p[1]; }},
      {"stack", [](const Tensor& x) { return stack({x * x, x}, 0) * x; }},
      {"max", [](const Tensor& x) { return max(x * x * x, 1); }},
      {"mean", [](const Tensor& x) { return mean(x * x, {0}) * mean(x, {0}); }},
      {"cast", [](const Tensor& x) { return cast(cast(x, DType::Float32), DType::Float64) * x * x; }},
  };
  for (auto& [name, f] : fs) {
    GradcheckOptions opt;
    if (std::string(name) == "cast") {  // float32 rounding inside
      opt.atol = 1e-3;
      opt.rtol = 1e-2;
      opt.eps = 1e-3;
    }
    auto g = [&](const std::vector<Tensor>& in) { return grad([&](const Tensor& v) { return sum(f(v)); })(in[0]); };
    EXPECT_TRUE(grad_ok(g, {random({3, 4}, 57)}, opt)) << name;
  }
}

TEST(AutogradTrace, RecordedGraphOfBaydinsExample) {
  // y = ln(x1) + x1 x2 - sin(x2) at (2, 5) (Baydin et al. 2018): the recorded nodes in forward
  // order, their values, and one backward pass over them.
  std::map<const autograd::Node*, Tensor> values;
  std::vector<std::string> recorded;  // in the order the engine reported them
  auto observing = std::make_unique<autograd::ObserveRecording>([&](const autograd::Node& n, const Tensor& v) {
    values[&n] = v;
    recorded.push_back(n.op);
  });
  std::shared_ptr<autograd::Node> root;
  auto [ys, vjp] = make_vjp([&](const std::vector<Tensor>& in) {
    Tensor y = log(in[0]) + in[0] * in[1] - sin(in[1]);
    root = y.impl()->node;
    return std::vector<Tensor>{y};
  }, {scalar(2.0, DType::Float64), scalar(5.0, DType::Float64)});
  observing.reset();
  // In the order the program ran them (C++ leaves the order of the three operands open; the
  // inputs come first and the subtraction last either way).
  ASSERT_EQ(recorded.size(), 7u);
  EXPECT_EQ(recorded[0], "input");
  EXPECT_EQ(recorded[1], "input");
  EXPECT_EQ(recorded.back(), "sub");
  std::vector<autograd::Node*> order = autograd::toposort({root});
  std::vector<std::string> ops;
  for (autograd::Node* n : order) ops.push_back(n->op);
  // Parents come before children; both inputs first among their users.
  auto pos = [&](const std::string& op) { return std::find(ops.begin(), ops.end(), op) - ops.begin(); };
  ASSERT_EQ(ops.size(), 7u) << ::testing::PrintToString(ops);
  EXPECT_LT(pos("log"), pos("add"));
  EXPECT_LT(pos("mul"), pos("add"));
  EXPECT_LT(pos("add"), pos("sub"));
  EXPECT_LT(pos("sin"), pos("sub"));
  EXPECT_EQ(ops.back(), "sub");
  for (autograd::Node* n : order) {
    ASSERT_TRUE(values.count(n) && values[n].defined()) << n->op;
    EXPECT_FALSE(values[n].is_traced()) << n->op;  // the observer sees raw values
    if (std::string(n->op) == "log") EXPECT_NEAR(values[n].item(), std::log(2.0), 1e-15);
    if (std::string(n->op) == "mul") EXPECT_EQ(values[n].item(), 10.0);
    if (std::string(n->op) == "sin") EXPECT_NEAR(values[n].item(), std::sin(5.0), 1e-15);
  }
  EXPECT_NEAR(ys[0].item(), 11.652071455223084, 1e-12);
  std::vector<Tensor> g = vjp({scalar(1.0, DType::Float64)});
  EXPECT_NEAR(g[0].item(), 5.5, 1e-15);
  EXPECT_NEAR(g[1].item(), 2.0 - std::cos(5.0), 1e-15);  // 1.716
  // backward_pass returns the adjoint of any node asked for: here the product's is 1.
  std::vector<std::shared_ptr<autograd::Node>> wanted;
  for (size_t i = 0; i < root->parents.size(); ++i) wanted.push_back(root->parents[i]);
  std::vector<Tensor> adj = autograd::backward_pass({root}, {scalar(1.0, DType::Float64)}, wanted);
  ASSERT_EQ(adj.size(), 2u);
  EXPECT_EQ(adj[0].item(), 1.0);   // d y / d (ln x1 + x1 x2)
  EXPECT_EQ(adj[1].item(), -1.0);  // d y / d sin(x2)
  // Once the observer is gone nothing is reported.
  size_t before = recorded.size();
  (void)make_vjp([](const std::vector<Tensor>& in) { return std::vector<Tensor>{exp(in[0])}; }, {scalar(1.0, DType::Float64)});
  EXPECT_EQ(recorded.size(), before);
}

TEST(AutogradHigherOrder, NoPerturbationConfusion) {
  // d/dx [ x * d/dy (x + y) at y = 1 ] at x = 1 is 1; mixing up the two derivatives' tags gives 2.
  Tensor one = scalar(1.0, DType::Float64);
  auto inner_fwd = [&](const Tensor& x) { return make_jvp([&](const Tensor& y) { return x + y; }, one, one).second; };
  EXPECT_EQ(make_jvp([&](const Tensor& x) { return x * inner_fwd(x); }, one, one).second.item(), 1.0);
  auto inner_rev = [&](const Tensor& x) { return grad([&](const Tensor& y) { return x + y; })(one); };
  EXPECT_EQ(grad([&](const Tensor& x) { return x * inner_rev(x); })(one).item(), 1.0);
  EXPECT_EQ(grad([&](const Tensor& x) { return x * inner_fwd(x); })(one).item(), 1.0);
  EXPECT_EQ(make_jvp([&](const Tensor& x) { return x * inner_rev(x); }, one, one).second.item(), 1.0);
}
