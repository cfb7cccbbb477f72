// Reductions: sum/mean over any set of dims (adjacent or not, negative, keepdim), max with ties,
// argmax, sum_to, against plain float64 loops; gradcheck on views; bad input.
#include <limits>

#include "ops/reference.h"

using namespace ember;
using namespace ember::testing;

namespace {

// Reference reduction of x over `dims` (sorted, non-negative) with `combine`, starting from `init`.
Tensor ref_reduce(const Tensor& x, const Shape& dims, bool keepdim, double init,
                  const std::function<double(double, double)>& combine) {
  Shape kept = x.shape();
  for (int64_t d : dims) kept[size_t(d)] = 1;
  Tensor acc = full(kept, init, DType::Float64);
  for_each_index(x.shape(), [&](const Shape& i) {
    Shape o = i;
    for (int64_t d : dims) o[size_t(d)] = 0;
    acc.set(o, combine(acc.at(o), x.at(i)));
  });
  if (keepdim) return acc;
  Shape out;
  for (size_t i = 0; i < kept.size(); ++i)
    if (std::find(dims.begin(), dims.end(), int64_t(i)) == dims.end()) out.push_back(kept[i]);
  return acc.reshape(out);
}

Tensor ref_sum(const Tensor& x, const Shape& dims, bool keepdim) {
  return ref_reduce(x, dims, keepdim, 0.0, [](double a, double v) { return a + v; });
}

struct DimCase {
  Shape dims;    // as passed (may be negative, unsorted)
  Shape sorted;  // normalised
};

}  // namespace

TEST(Reduce, SumOverDimSets) {
  Tensor x = random({2, 3, 4, 5}, 1);
  std::vector<DimCase> cases = {
      {{0}, {0}}, {{3}, {3}}, {{-1}, {3}}, {{1, 2}, {1, 2}}, {{0, 2}, {0, 2}}, {{3, 1}, {1, 3}},
      {{0, -1}, {0, 3}}, {{0, 1, 3}, {0, 1, 3}}, {{0, 1, 2, 3}, {0, 1, 2, 3}}, {{}, {0, 1, 2, 3}},
  };
  for (const DimCase& c : cases)
    for (bool keep : {false, true}) {
      Tensor y = sum(x, c.dims, keep);
      EXPECT_TRUE(all_close(y, ref_sum(x, c.sorted, keep), 1e-12)) << to_string(c.dims) << " keepdim " << keep;
      Tensor m = mean(x, c.dims, keep);
      int64_t count = 1;
      for (int64_t d : c.sorted) count *= x.shape()[size_t(d)];
      EXPECT_TRUE(all_close(m, ref_sum(x, c.sorted, keep) / double(count), 1e-12)) << "mean " << to_string(c.dims);
    }
  EXPECT_EQ(sum(x).dim(), 0);
  EXPECT_EQ(sum(x, {}, true).shape(), (Shape{1, 1, 1, 1}));
}

TEST(Reduce, SumOnViewsAndDtypes) {
  Tensor t = transposed_random({3, 4, 5}, 2), s = strided_random({3, 4, 5}, 3), e = expanded_random({3, 4, 5}, 4);
  for (const Tensor& x : {t, s, e})
    for (Shape dims : {Shape{0}, Shape{2}, Shape{0, 2}, Shape{1}})
      EXPECT_TRUE(all_close(sum(x, dims), ref_sum(x, dims, false), 1e-12)) << to_string(dims);
  // float32 rows long enough to need a wider accumulator, and the threaded column path.
  Tensor big = random({2, 50000}, 5);
  Tensor bs = sum(big.to(DType::Float32), {1});
  EXPECT_TRUE(all_close(bs.to(DType::Float64), ref_sum(big.to(DType::Float32).to(DType::Float64), {1}, false), 1e-4, 1e-6));
  Tensor cols = random({3, 20000}, 6);
  EXPECT_TRUE(all_close(sum(cols.to(DType::Float32), {0}).to(DType::Float64), ref_sum(cols, {0}, false), 1e-5, 1e-5));
  // int64 sums exactly.
  Tensor ints = arange(12).reshape({3, 4});
  EXPECT_EQ(sum(ints, {0}).to_vector<int64_t>(), (std::vector<int64_t>{12, 15, 18, 21}));
  EXPECT_EQ(sum(ints).item(), 66);
  EXPECT_EQ(sum(ints).dtype(), DType::Int64);
  // Empty dims sum to zero.
  EXPECT_TRUE(all_close(sum(zeros({3, 0}, DType::Float64), {1}), zeros({3}, DType::Float64)));
  // A 0-d tensor sums over its one "dimension" to itself.
  Tensor z = scalar(2.5, DType::Float64);
  EXPECT_EQ(sum(z).item(), 2.5);
  EXPECT_EQ(sum(z, {0}).item(), 2.5);
  EXPECT_EQ(sum(z, {-1}, true).item(), 2.5);
}

TEST(Reduce, SumAndMeanGradcheck) {
  Tensor x = random({2, 3, 4}, 7);
  for (Shape dims : {Shape{}, Shape{0}, Shape{1}, Shape{0, 2}, Shape{-1, 0}})
    for (bool keep : {false, true}) {
      EXPECT_TRUE(grad_ok([&](const std::vector<Tensor>& in) { return sum(in[0], dims, keep); }, {x})) << to_string(dims);
      EXPECT_TRUE(grad_ok([&](const std::vector<Tensor>& in) { return mean(in[0], dims, keep); }, {x})) << to_string(dims);
    }
  for (const Tensor& v : {transposed_random({3, 4}, 8), strided_random({3, 4}, 9), expanded_random({3, 4}, 10)}) {
    EXPECT_TRUE(grad_ok([&](const std::vector<Tensor>& in) { return sum(in[0] * in[0], {0}); }, {v}));
    EXPECT_TRUE(grad_ok([&](const std::vector<Tensor>& in) { return mean(in[0], {1}, true); }, {v}));
  }
  EXPECT_TRUE(grad_ok([&](const std::vector<Tensor>& in) { return sum(in[0]); }, {random({}, 11)}));
  // Second derivative through sum/mean.
  EXPECT_TRUE(grad_ok([&](const std::vector<Tensor>& in) {
    return grad([](const Tensor& v) { return mean(v, {0}) .reshape({-1}).slice(0, 0, 1).reshape({}) * sum(v * v); })(in[0]);
  }, {random({3, 2}, 12)}));
}

TEST(Reduce, MaxValuesAndArgmax) {
  Tensor x = random({3, 4, 5}, 13);
  for (int64_t d : {0, 1, 2, -1})
    for (bool keep : {false, true}) {
      int64_t dd = d < 0 ? d + 3 : d;
      Tensor ref = ref_reduce(x, {dd}, keep, -INFINITY, [](double a, double v) { return std::max(a, v); });
      EXPECT_TRUE(all_close(max(x, d, keep), ref, 0, 0)) << d;
      Tensor am = argmax(x, d, keep);
      EXPECT_EQ(am.dtype(), DType::Int64);
      EXPECT_EQ(am.shape(), ref.shape());
      // x at the argmax is the max.
      Tensor amk = keep ? am : am.unsqueeze(dd);
      for_each_index(amk.shape(), [&](const Shape& i) {
        Shape j = i;
        j[size_t(dd)] = int64_t(amk.at(i));
        Shape o = i;
        if (!keep) o.erase(o.begin() + dd);
        EXPECT_EQ(x.at(j), ref.at(o));
      });
    }
  std::vector<double> all = x.to_vector<double>();
  EXPECT_EQ(max(x).item(), *std::max_element(all.begin(), all.end()));
  // Views and float32 and int64.
  Tensor t = transposed_random({4, 6}, 14);
  EXPECT_TRUE(all_close(max(t, 1), ref_reduce(t, {1}, false, -INFINITY, [](double a, double v) { return std::max(a, v); }), 0, 0));
  EXPECT_TRUE(all_close(max(t.to(DType::Float32), 0).to(DType::Float64),
                        ref_reduce(t.to(DType::Float32).to(DType::Float64), {0}, false, -INFINITY,
                                   [](double a, double v) { return std::max(a, v); }), 0, 0));
  EXPECT_EQ(max(from_vector(std::vector<int64_t>{3, -1, 7, 2}, {2, 2}), 1).to_vector<int64_t>(), (std::vector<int64_t>{3, 7}));
  // Enough rows for the threaded kernel.
  Tensor tall = random({3000, 3}, 62);
  EXPECT_TRUE(all_close(max(tall, 1), ref_reduce(tall, {1}, false, -INFINITY, [](double p, double v) { return std::max(p, v); }), 0, 0));
  // Ties: argmax picks the first.
  EXPECT_EQ(argmax(from_vector(std::vector<double>{1, 5, 5, 2}), 0).item(), 1);
  EXPECT_EQ(max(scalar(4.0, DType::Float64), 0).item(), 4.0);
}

TEST(Reduce, MaxPropagatesNaN) {
  double nan = std::numeric_limits<double>::quiet_NaN();
  for (std::vector<double> v : {std::vector<double>{1, nan, 2}, std::vector<double>{nan, 1, 2}, std::vector<double>{1, 2, nan}}) {
    Tensor x = from_vector(v);
    EXPECT_TRUE(std::isnan(max(x, 0).item())) << v[0] << " " << v[1] << " " << v[2];
    EXPECT_TRUE(std::isnan(v[size_t(argmax(x, 0).item())]));
  }
}

TEST(Reduce, MaxGradientSharesTies) {
  Tensor x = from_vector(std::vector<double>{1, 3, 3, 0, 2, -1, 2, 2}, {2, 4});
  Tensor g = grad([](const Tensor& v) { return sum(max(v, 1)); })(x);
  EXPECT_EQ(g.to_vector<double>(), (std::vector<double>{0, 0.5, 0.5, 0, 1.0 / 3, 0, 1.0 / 3, 1.0 / 3}));
  // keepdim and a weighted cotangent.
  auto [y, vjp] = make_vjp([](const Tensor& v) { return max(v, 0, true); }, x);
  EXPECT_EQ(y.shape(), (Shape{1, 4}));
  Tensor gx = vjp(from_vector(std::vector<double>{1, 2, 3, 4}, {1, 4}));
  EXPECT_EQ(gx.to_vector<double>(), (std::vector<double>{0, 2, 3, 0, 1, 0, 0, 4}));
  Tensor tied = from_vector(std::vector<double>{2, 2, 2}, {3, 1});  // a three-way tie down a column
  EXPECT_EQ(grad([](const Tensor& v) { return sum(max(v, 0)); })(tied).to_vector<double>(),
            (std::vector<double>{1.0 / 3, 1.0 / 3, 1.0 / 3}));
  // Forward mode agrees with reverse mode on ties.
  Tensor v = random({2, 4}, 15);
  auto [yy, t] = make_jvp([](const Tensor& u) { return max(u, 1); }, x, v);
  Tensor rev = grad([&](const Tensor& u) { return sum(max(u, 1) * ones({2}, DType::Float64)); })(x);
  EXPECT_NEAR(sum(t).item(), sum(rev * v).item(), 1e-12);
}

TEST(Reduce, MaxGradcheck) {
  // Random values have no ties, so max is differentiable there.
  for (const Tensor& x : {random({3, 4}, 16), transposed_random({3, 5}, 17), strided_random({2, 3, 4}, 18)})
    for (int64_t d : {0, -1})
      for (bool keep : {false, true})
        EXPECT_TRUE(grad_ok([&](const std::vector<Tensor>& in) { return max(in[0], d, keep); }, {x})) << d << keep;
  EXPECT_TRUE(grad_ok([&](const std::vector<Tensor>& in) { return max(in[0]); }, {random({2, 3}, 19)}));
  EXPECT_TRUE(grad_ok([&](const std::vector<Tensor>& in) {
    return grad([](const Tensor& v) { return sum(max(v * v, 0)); })(in[0]);
  }, {random({3, 2}, 20)}));
}

TEST(Reduce, SumTo) {
  Tensor x = random({3, 2, 4}, 21);
  EXPECT_TRUE(all_close(sum_to(x, {2, 4}), ref_sum(x, {0}, false), 1e-12));
  EXPECT_TRUE(all_close(sum_to(x, {3, 1, 4}), ref_sum(x, {1}, true), 1e-12));
  EXPECT_TRUE(all_close(sum_to(x, {1, 4}), ref_sum(x, {0, 1}, false).reshape({1, 4}), 1e-12));
  EXPECT_TRUE(all_close(sum_to(x, {}), ref_sum(x, {0, 1, 2}, false), 1e-12));
  EXPECT_EQ(sum_to(x, x.shape()).impl(), x.impl());
  EXPECT_TRUE(grad_ok([](const std::vector<Tensor>& in) { return sum_to(in[0], {2, 1}); }, {random({3, 2, 4}, 22)}));
  EXPECT_EMBER_ERROR(sum_to(x, {3, 4}), "sum_to");
  EXPECT_EMBER_ERROR(sum_to(random({4}, 1), {2, 4}), "sum_to");
}

TEST(Reduce, Errors) {
  Tensor x = random({2, 3}, 23);
  EXPECT_EMBER_ERROR(sum(x, {2}), "sum:");
  EXPECT_EMBER_ERROR(sum(x, {-3}), "out of range");
  EXPECT_EMBER_ERROR(sum(x, {1, -1}), "repeated");
  EXPECT_EMBER_ERROR(mean(x, {5}), "mean:");
  EXPECT_EMBER_ERROR(mean(arange(3)), "mean:");
  EXPECT_EMBER_ERROR(mean(zeros({0, 2}), {0}), "mean:");
  EXPECT_EMBER_ERROR(max(x, 2), "max:");
  EXPECT_EMBER_ERROR(max(zeros({0, 2}), 0), "max:");
  EXPECT_EMBER_ERROR(max(zeros({0})), "max:");
  EXPECT_EMBER_ERROR(argmax(x, -3), "argmax:");
  EXPECT_EMBER_ERROR(argmax(scalar(1.0), 0), "argmax:");
  EXPECT_EMBER_ERROR(sum(Tensor()), "sum:");
}

// ---- min, argmin, prod, var/std, norm ----

TEST(Reduce, MinMatchesALoopAndSharesTiedGradients) {
  Tensor x = random({3, 5}, 301);
  EXPECT_TRUE(all_close(min(x, 1), ref_reduce(x, {1}, false, INFINITY, [](double a, double v) { return std::min(a, v); }), 0, 0));
  EXPECT_TRUE(all_close(min(x, 0, true), ref_reduce(x, {0}, true, INFINITY, [](double a, double v) { return std::min(a, v); }), 0, 0));
  EXPECT_DOUBLE_EQ(min(x).item(), ref_reduce(x, {0, 1}, false, INFINITY, [](double a, double v) { return std::min(a, v); }).item());
  EXPECT_TRUE(grad_ok([](const std::vector<Tensor>& v) { return min(v[0], 1); }, {x}));
  Tensor tied = from_vector(std::vector<double>{2, -1, 3, -1});
  Tensor g = grad([](const Tensor& v) { return min(v); })(tied);
  EXPECT_EQ(g.to_vector<double>(), (std::vector<double>{0, 0.5, 0, 0.5}));
}

TEST(Reduce, ArgminTakesTheFirstMinimumAndKeepsDims) {
  Tensor x = from_vector(std::vector<double>{3, 1, 1, 5, 0, 2, 0, 9}, {2, 4});
  EXPECT_EQ(argmin(x, 1).to_vector<int64_t>(), (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(argmin(x, 1, true).shape(), (Shape{2, 1}));
  EXPECT_EQ(argmax(x, 0, true).shape(), (Shape{1, 4}));
  EXPECT_EQ(argmin(x, 0).to_vector<int64_t>(), (std::vector<int64_t>{1, 0, 1, 0}));
  EXPECT_EQ(argmin(arange(5), 0).item(), 0);
  EXPECT_EMBER_ERROR(argmin(zeros({0, 3}), 0), "argmin: cannot take the argmin over an empty dimension");
  EXPECT_EMBER_ERROR(argmin(x, 2), "argmin");
}

TEST(Reduce, ProdGradientHandlesZeros) {
  // Row 0: no zero; row 1: one zero (its gradient is the product of the others); row 2: two zeros.
  Tensor x = from_vector(std::vector<double>{2, 3, 4, 2, 0, 5, 0, 7, 0}, {3, 3});
  EXPECT_EQ(prod(x, {1}).to_vector<double>(), (std::vector<double>{24, 0, 0}));
  Tensor g = grad([](const Tensor& v) { return sum(prod(v, {1})); })(x);
  EXPECT_EQ(g.to_vector<double>(), (std::vector<double>{12, 8, 6, 0, 10, 0, 0, 0, 0}));
  EXPECT_DOUBLE_EQ(prod(full({0}, 1.0, DType::Float64)).item(), 1.0);  // the empty product
  Tensor r = random({2, 3, 4}, 302, true);
  EXPECT_TRUE(grad_ok([](const std::vector<Tensor>& v) { return prod(v[0], {0, 2}, true); }, {r}));
}

TEST(Reduce, VarAndStdApplyTheCorrection) {
  Tensor x = random({4, 6}, 303);
  for (double correction : {0.0, 1.0, 2.0}) {
    Tensor m = ref_sum(x, {1}, true) / 6.0;
    Tensor ref = ref_tensor({4}, [&](const Shape& i) {
      double acc = 0;
      for (int64_t j = 0; j < 6; ++j) acc += std::pow(x.at({i[0], j}) - m.at({i[0], 0}), 2);
      return acc / (6 - correction);
    });
    EXPECT_TRUE(all_close(var(x, {1}, correction), ref, 1e-12, 1e-12)) << correction;
    EXPECT_TRUE(all_close(ember::std(x, {-1}, correction), sqrt(ref), 1e-12, 1e-12)) << correction;
  }
  EXPECT_EQ(var(x, {0}, 1, true).shape(), (Shape{1, 6}));
  EXPECT_TRUE(grad_ok([](const std::vector<Tensor>& v) { return ember::std(v[0], {0}); }, {x}));
  EXPECT_TRUE(grad_ok([](const std::vector<Tensor>& v) { return var(v[0]); }, {x}));
  EXPECT_EMBER_ERROR(var(random({1, 3}, 1), {0}), "var: 1 elements of shape [1, 3] over dims [0] leave no degrees of freedom");
  EXPECT_EMBER_ERROR(var(arange(4)), "var: expected a float32 or float64 tensor");
}

TEST(Reduce, NormForP1P2PInfAndGeneralP) {
  Tensor x = random({3, 5}, 304);
  auto ref = [&](double p) {
    return ref_tensor({3}, [&](const Shape& i) {
      double acc = 0;
      for (int64_t j = 0; j < 5; ++j) {
        double a = std::fabs(x.at({i[0], j}));
        acc = std::isinf(p) ? std::max(acc, a) : acc + std::pow(a, p);
      }
      return std::isinf(p) ? acc : std::pow(acc, 1 / p);
    });
  };
  for (double p : {1.0, 2.0, 3.0, double(INFINITY)}) {
    EXPECT_TRUE(all_close(norm(x, p, {1}), ref(p), 1e-12, 1e-12)) << p;
    EXPECT_TRUE(grad_ok([p](const std::vector<Tensor>& v) { return norm(v[0], p, {1}); }, {x})) << p;
  }
  EXPECT_NEAR(norm(x).item(), std::sqrt(sum(x * x).item()), 1e-12);
  EXPECT_EQ(norm(x, INFINITY, {0, 1}, true).shape(), (Shape{1, 1}));
  EXPECT_DOUBLE_EQ(norm(x, INFINITY).item(), max(abs(x)).item());
  // An all-zero row has norm 0 and the zero subgradient, not NaN.
  Tensor z = concat({zeros({1, 5}, DType::Float64), x}, 0);
  for (double p : {2.0, 3.0}) {
    Tensor g = grad([p](const Tensor& v) { return sum(norm(v, p, {1})); })(z);
    std::vector<double> gv = g.to_vector<double>();
    for (size_t i = 0; i < 5; ++i) EXPECT_EQ(gv[i], 0.0) << p;
    EXPECT_TRUE(all_close(slice(g, 0, 1, 4), grad([p](const Tensor& v) { return sum(norm(v, p, {1})); })(x), 1e-14, 1e-14));
    EXPECT_EQ(norm(z, p, {1}).at({0}), 0.0);
  }
  EXPECT_EMBER_ERROR(norm(x, 0.5), "norm: p must be at least 1");
}
