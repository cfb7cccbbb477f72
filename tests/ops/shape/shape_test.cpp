// Shape primitives: views (reshape, view, transpose, permute, slice, expand, unsqueeze, squeeze)
// and copies (contiguous, concat, stack, split): values against index arithmetic, gradcheck on
// contiguous and non-contiguous inputs, derivatives of derivatives through views, bad input.
#include "ops/reference.h"

using namespace ember;
using namespace ember::testing;

namespace {
using Fn = std::function<Tensor(const Tensor&)>;

// Each view op as a function of one tensor of shape [2, 3, 4] (or what the input allows).
std::vector<std::pair<const char*, Fn>> view_ops() {
  return {
      {"reshape", [](const Tensor& x) { return x.reshape({4, -1}); }},
      {"view", [](const Tensor& x) { return x.contiguous().view({6, 4}); }},
      {"transpose", [](const Tensor& x) { return x.transpose(0, 2); }},
      {"permute", [](const Tensor& x) { return x.permute({1, 2, 0}); }},
      {"slice", [](const Tensor& x) { return x.slice(2, 1, 4, 2); }},
      {"slice negative", [](const Tensor& x) { return x.slice(-2, -2, 3); }},
      {"narrow", [](const Tensor& x) { return x.narrow(0, 1, 1); }},
      {"expand", [](const Tensor& x) { return x.unsqueeze(0).expand({3, 2, 3, 4}); }},
      {"unsqueeze", [](const Tensor& x) { return x.unsqueeze(-1); }},
      {"squeeze", [](const Tensor& x) { return x.narrow(1, 0, 1).squeeze(1); }},
      {"contiguous", [](const Tensor& x) { return x.transpose(0, 1).contiguous(); }},
      {"clone", [](const Tensor& x) { return x.clone(); }},
      {"flatten", [](const Tensor& x) { return x.flatten(); }},
      {"chain", [](const Tensor& x) { return x.t().slice(0, 0, 4, 3).reshape({-1}).unsqueeze(1).expand({-1, 2}); }},
  };
}

std::vector<std::pair<const char*, Tensor>> view_inputs(uint64_t s) {
  return {{"contiguous", random({2, 3, 4}, s)},
          {"transposed", transposed_random({2, 3, 4}, s + 1)},
          {"strided", strided_random({2, 3, 4}, s + 2)},
          {"expanded", expanded_random({2, 3, 4}, s + 3)}};
}

}  // namespace

TEST(ShapeViews, GradcheckOnEveryLayout) {
  for (auto& [name, op] : view_ops())
    for (auto& [layout, x] : view_inputs(10))
      EXPECT_TRUE(grad_ok([&](const std::vector<Tensor>& in) { return op(in[0]); }, {x})) << name << " on " << layout;
}

TEST(ShapeViews, ValuesFollowIndexArithmetic) {
  Tensor x = random({2, 3, 4}, 1);
  Tensor p = x.permute({2, 0, 1});
  for_each_index(p.shape(), [&](const Shape& i) { EXPECT_EQ(p.at(i), x.at({i[1], i[2], i[0]})); });
  Tensor s = x.slice(2, 1, 4, 2);
  for_each_index(s.shape(), [&](const Shape& i) { EXPECT_EQ(s.at(i), x.at({i[0], i[1], 1 + 2 * i[2]})); });
  Tensor r = x.transpose(0, 1).reshape({3, 8});  // a copy: element order of the transposed view
  for_each_index(r.shape(), [&](const Shape& i) { EXPECT_EQ(r.at(i), x.at({i[1] / 4, i[0], i[1] % 4})); });
  EXPECT_TRUE(r.is_contiguous());
}

TEST(ShapeViews, ViewsOfTracedTensorsAreRecorded) {
  Tensor x = random({3, 4}, 2);
  auto [y, vjp] = make_vjp([](const Tensor& v) { return v.t().slice(0, 1, 3).unsqueeze(0); }, x);
  EXPECT_EQ(y.shape(), (Shape{1, 2, 3}));
  Tensor g = random({1, 2, 3}, 3);
  Tensor gx = vjp(g);
  for_each_index(x.shape(), [&](const Shape& i) {
    double expect = (i[1] >= 1 && i[1] < 3) ? g.at({0, i[1] - 1, i[0]}) : 0.0;
    EXPECT_EQ(gx.at(i), expect);
  });
  // Forward mode through views.
  Tensor v = random({3, 4}, 4);
  auto [yy, t] = make_jvp([](const Tensor& u) { return u.t().slice(0, 1, 3); }, x, v);
  EXPECT_TRUE(all_close(t, v.t().slice(0, 1, 3)));
}

TEST(ShapeViews, HigherOrderDerivativesFlowThroughViews) {
  // Each view op inside a function whose gradient depends on x: grad of grad must see the view.
  for (auto& [name, op] : view_ops()) {
    auto g = [&](const std::vector<Tensor>& in) {
      return grad([&](const Tensor& v) {
        Tensor w = op(v);
        return sum(w * w * w);
      })(in[0]);
    };
    EXPECT_TRUE(grad_ok(g, {random({2, 3, 4}, 5)})) << name;
  }
  // The second derivative of sum(x^T x) through a transpose inside matmul is 2 everywhere.
  Tensor x = random({4, 1}, 6);
  Tensor h = grad([](const Tensor& y) {
    return sum(grad([](const Tensor& z) { return sum(matmul(z.t(), z)); })(y));
  })(x);
  EXPECT_TRUE(all_close(h, full({4, 1}, 2.0, DType::Float64), 1e-12));
}

TEST(ShapeConcat, ValuesAndGradients) {
  Tensor a = random({2, 3}, 7), b = random({2, 1}, 8), c = transposed_random({2, 4}, 9);
  Tensor y = concat({a, b, c}, 1);
  EXPECT_EQ(y.shape(), (Shape{2, 8}));
  for_each_index(y.shape(), [&](const Shape& i) {
    double e = i[1] < 3 ? a.at(i) : i[1] < 4 ? b.at({i[0], 0}) : c.at({i[0], i[1] - 4});
    EXPECT_EQ(y.at(i), e);
  });
  EXPECT_TRUE(all_close(concat({a, random({1, 3}, 10)}, -2).slice(0, 0, 2), a));
  EXPECT_EQ(concat({a}, 0).to_vector<double>(), a.to_vector<double>());
  EXPECT_EQ(concat({a, zeros({2, 0}, DType::Float64)}, 1).shape(), (Shape{2, 3}));
  EXPECT_TRUE(grad_ok([](const std::vector<Tensor>& in) { return concat(in, 1); }, {a, b, c}));
  EXPECT_TRUE(grad_ok([](const std::vector<Tensor>& in) { return concat({in[0], in[0] * in[1]}, 0); },
                      {strided_random({2, 3}, 11), random({3}, 12)}));
  // Only some inputs traced: the JVP fills the others with zeros.
  EXPECT_TRUE(grad_ok([&](const std::vector<Tensor>& in) { return concat({a, in[0], c}, 1); }, {b}));
  Tensor ints = concat({arange(2), arange(3)}, 0);
  EXPECT_EQ(ints.to_vector<int64_t>(), (std::vector<int64_t>{0, 1, 0, 1, 2}));
}

TEST(ShapeStack, ValuesAndGradients) {
  Tensor a = random({2, 3}, 13), b = transposed_random({2, 3}, 14);
  for (int64_t d : {0, 1, 2, -1}) {
    Tensor y = stack({a, b}, d);
    int64_t dd = d < 0 ? d + 3 : d;
    Shape expect = {2, 3};
    expect.insert(expect.begin() + dd, 2);
    EXPECT_EQ(y.shape(), expect);
    for_each_index(y.shape(), [&](const Shape& i) {
      Shape j = i;
      j.erase(j.begin() + dd);
      EXPECT_EQ(y.at(i), (i[size_t(dd)] == 0 ? a : b).at(j));
    });
    EXPECT_TRUE(grad_ok([&](const std::vector<Tensor>& in) { return stack(in, d); }, {a, b})) << d;
  }
  EXPECT_EQ(stack({scalar(1.0), scalar(2.0)}, 0).to_vector<float>(), (std::vector<float>{1, 2}));
}

TEST(ShapeSplit, ValuesAndGradients) {
  Tensor x = random({5, 4}, 15);
  std::vector<Tensor> parts = split(x, std::vector<int64_t>{2, 0, 3}, 0);
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_EQ(parts[1].shape(), (Shape{0, 4}));
  EXPECT_TRUE(all_close(parts[2], x.slice(0, 2, 5)));
  EXPECT_EQ(parts[0].impl()->storage, x.impl()->storage);  // pieces are views
  std::vector<Tensor> even = split(x, 3, 1);  // 3 + 1
  ASSERT_EQ(even.size(), 2u);
  EXPECT_EQ(even[0].shape(), (Shape{5, 3}));
  EXPECT_EQ(even[1].shape(), (Shape{5, 1}));
  EXPECT_TRUE(all_close(concat(even, 1), x));
  // Gradient of a function of the pieces: each piece's cotangent lands in its region.
  EXPECT_TRUE(grad_ok([](const std::vector<Tensor>& in) {
    std::vector<Tensor> p = split(in[0], 2, -1);
    return p[0] * p[1];
  }, {transposed_random({3, 4}, 16)}));
  EXPECT_TRUE(grad_ok([](const std::vector<Tensor>& in) {
    std::vector<Tensor> p = split(in[0], std::vector<int64_t>{1, 2}, 0);
    return concat({p[1], p[0] * 2.0}, 0);
  }, {random({3, 2}, 17)}));
}

TEST(ShapeErrors, ViewsAndCopies) {
  Tensor x = random({2, 3}, 18);
  EXPECT_EMBER_ERROR(x.t().view({6}), "view:");
  EXPECT_EMBER_ERROR(x.t().view({6}), "not contiguous");
  EXPECT_EMBER_ERROR(x.view({4, 2}), "view:");
  EXPECT_EMBER_ERROR(x.reshape({4, -1}), "reshape:");
  EXPECT_EMBER_ERROR(x.reshape({-1, 0}), "reshape:");
  EXPECT_EMBER_ERROR(x.transpose(0, 2), "transpose:");
  EXPECT_EMBER_ERROR(x.transpose(-3, 0), "transpose:");
  EXPECT_EMBER_ERROR(x.permute({0, 2}), "permute:");
  EXPECT_EMBER_ERROR(x.permute({0}), "permute:");
  EXPECT_EMBER_ERROR(x.slice(2, 0, 1), "slice:");
  EXPECT_EMBER_ERROR(x.slice(0, 0, 1, -1), "slice:");
  EXPECT_EMBER_ERROR(x.expand({2, 4}), "expand:");
  EXPECT_EMBER_ERROR(x.expand({3}), "expand:");
  EXPECT_EMBER_ERROR(x.unsqueeze(3), "unsqueeze:");
  EXPECT_EMBER_ERROR(x.unsqueeze(-4), "unsqueeze:");
  EXPECT_EMBER_ERROR(x.squeeze(1), "squeeze:");
  EXPECT_EMBER_ERROR(x.squeeze(2), "squeeze:");
  EXPECT_EMBER_ERROR(reshape(Tensor(), {1}), "reshape:");
}

TEST(ShapeErrors, ConcatStackSplit) {
  Tensor a = random({2, 3}, 19);
  EXPECT_EMBER_ERROR(concat({}, 0), "concat:");
  EXPECT_EMBER_ERROR(concat({a, random({3, 3}, 1)}, 1), "concat:");
  EXPECT_EMBER_ERROR(concat({a, random({3, 3}, 1)}, 1), "[3, 3]");
  EXPECT_EMBER_ERROR(concat({a, random({2}, 1)}, 0), "concat:");
  EXPECT_EMBER_ERROR(concat({a, a.to(DType::Float32)}, 0), "float32");
  EXPECT_EMBER_ERROR(concat({a, a}, 2), "concat:");
  EXPECT_EMBER_ERROR(concat({scalar(1.0), scalar(2.0)}, 0), "concat:");
  EXPECT_EMBER_ERROR(concat({a, Tensor()}, 0), "concat:");
  EXPECT_EMBER_ERROR(stack({a, random({3, 2}, 1)}, 0), "stack:");
  EXPECT_EMBER_ERROR(stack({a, a}, 3), "stack:");
  EXPECT_EMBER_ERROR(stack({}, 0), "stack:");
  EXPECT_EMBER_ERROR(split(a, std::vector<int64_t>{1, 1}, 1), "split:");
  EXPECT_EMBER_ERROR(split(a, std::vector<int64_t>{4, -1}, 1), "split:");
  EXPECT_EMBER_ERROR(split(a, 0, 1), "split:");
  EXPECT_EMBER_ERROR(split(a, 1, 2), "split:");
  EXPECT_EMBER_ERROR(split(scalar(1.0), 1, 0), "split:");
}

TEST(ShapeViews, ReshapeIsAViewWhenTheStridesAllowIt) {
  Tensor qkv = random({2, 5, 36}, 7);
  Tensor q = qkv.slice(-1, 0, 12);  // GPT-2's head split reads a slice of the fused projection
  Tensor heads = q.reshape({2, 5, 3, 4});
  EXPECT_EQ(heads.impl()->storage, qkv.impl()->storage);  // no copy
  EXPECT_TRUE(all_close(heads, q.contiguous().reshape({2, 5, 3, 4}), 0, 0));
  Tensor t = random({3, 4}, 8).t();  // [4, 3] with strides [1, 4]
  Tensor split = t.reshape({2, 2, 3});
  EXPECT_EQ(split.impl()->storage, t.impl()->storage);  // splitting a dim is a view
  EXPECT_TRUE(all_close(split, t.contiguous().reshape({2, 2, 3}), 0, 0));
  Tensor merged = t.reshape({12});  // merging dims that are not contiguous with each other copies
  EXPECT_NE(merged.impl()->storage, t.impl()->storage);
  EXPECT_TRUE(all_close(merged, t.contiguous().reshape({12}), 0, 0));
  EXPECT_EMBER_ERROR(view(t, {12}), "cannot be viewed as [12] without a copy");
}
