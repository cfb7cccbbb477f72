// topk and sort on the CPU against std::sort references: awkward lengths, every k edge, 1-d to
// 3-d, non-contiguous inputs, ties, NaN and signed zeros; their gradients; every error path.
#include <limits>

#include "ops/select/select_reference.h"

using namespace ember;
using namespace ember::testing;

namespace {

// Ties on purpose: small integers, so most values repeat within a row.
Tensor tied_random(const Shape& shape, uint64_t seed) {
  Generator g(seed);
  return randint(shape, -3, 4, &g).to(DType::Float64);
}

std::vector<int64_t> ks_for(int64_t n) {
  std::vector<int64_t> ks = {0, 1, n / 2, n};
  if (n > 2) ks.push_back(n - 1);
  return ks;
}

}  // namespace

TEST(SelectTopk, MatchesReferenceOnAwkwardShapes) {
  std::vector<Shape> shapes = {{1}, {7}, {33}, {1000}, {3, 7}, {4, 33}, {2, 1000}, {2, 3, 7}, {3, 1, 33}, {2, 5, 1}};
  uint64_t seed = 100;
  for (const Shape& s : shapes)
    for (DType dt : {DType::Float32, DType::Float64}) {
      Tensor x = random(s, ++seed).to(dt);
      for (int64_t k : ks_for(s.back()))
        for (bool largest : {true, false}) EXPECT_TRUE(topk_matches(x, k, largest, topk(x, k, largest))) << to_string(s);
    }
}

TEST(SelectTopk, NonContiguousInputs) {
  Tensor t = transposed_random({5, 33}, 200);  // (5, 33) viewed from a (33, 5) buffer
  Tensor st = strided_random({3, 7}, 201);     // every second element of each row
  Tensor t3 = random({7, 2, 4}, 202).permute({1, 2, 0});
  for (const Tensor& x : {t, st, t3})
    for (int64_t k : ks_for(x.size(-1)))
      for (bool largest : {true, false}) EXPECT_TRUE(topk_matches(x, k, largest, topk(x, k, largest)));
}

TEST(SelectTopk, TiesGoToTheLowerIndex) {
  Tensor x = from_vector(std::vector<double>{1, 3, 3, 2, 3, 1});
  TopK hi = topk(x, 3);
  EXPECT_EQ(hi.indices.to_vector<int64_t>(), (std::vector<int64_t>{1, 2, 4}));
  EXPECT_EQ(hi.values.to_vector<double>(), (std::vector<double>{3, 3, 3}));
  TopK lo = topk(x, 3, false);
  EXPECT_EQ(lo.indices.to_vector<int64_t>(), (std::vector<int64_t>{0, 5, 3}));
  // Many ties in every row, several lengths and both dtypes.
  uint64_t seed = 300;
  for (const Shape& s : std::vector<Shape>{{7}, {4, 33}, {2, 3, 1000}})
    for (DType dt : {DType::Float32, DType::Float64}) {
      Tensor xt = tied_random(s, ++seed).to(dt);
      for (int64_t k : ks_for(s.back()))
        for (bool largest : {true, false}) EXPECT_TRUE(topk_matches(xt, k, largest, topk(xt, k, largest)));
    }
}

TEST(SelectTopk, NanIsTheLargestValueAndZerosTie) {
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  for (DType dt : {DType::Float32, DType::Float64}) {
    Tensor x = from_vector(std::vector<double>{1, nan, -inf, 2, -nan, -0.0, 0.0, inf}).to(dt);
    TopK asc = sort(x);
    EXPECT_EQ(asc.indices.to_vector<int64_t>(), (std::vector<int64_t>{2, 5, 6, 0, 3, 7, 1, 4})) << dt;
    TopK desc = sort(x, true);
    EXPECT_EQ(desc.indices.to_vector<int64_t>(), (std::vector<int64_t>{1, 4, 7, 3, 0, 5, 6, 2})) << dt;
    std::vector<double> v = desc.values.to_vector<double>();
    EXPECT_TRUE(std::isnan(v[0]) && std::isnan(v[1]));
    EXPECT_EQ(v[2], inf);
    TopK top2 = topk(x, 2, false);
    EXPECT_EQ(top2.indices.to_vector<int64_t>(), (std::vector<int64_t>{2, 5}));
    EXPECT_TRUE(std::signbit(top2.values.to_vector<double>()[1])) << "the value is x's own -0.0";
    EXPECT_TRUE(topk_matches(x, 5, true, topk(x, 5, true)));
  }
}

TEST(SelectTopk, EmptyResultsAndEmptyInputs) {
  Tensor x = random({3, 4}, 400);
  TopK none = topk(x, 0);
  EXPECT_EQ(none.values.shape(), (Shape{3, 0}));
  EXPECT_EQ(none.indices.shape(), (Shape{3, 0}));
  EXPECT_EQ(none.indices.dtype(), DType::Int64);
  TopK rows0 = topk(zeros({0, 5}, DType::Float64), 2);
  EXPECT_EQ(rows0.values.shape(), (Shape{0, 2}));
  TopK n0 = sort(zeros({2, 0}));
  EXPECT_EQ(n0.values.shape(), (Shape{2, 0}));
  EXPECT_EQ(n0.values.dtype(), DType::Float32);
}

TEST(SelectSort, MatchesReferenceAndIsStable) {
  uint64_t seed = 500;
  for (const Shape& s : std::vector<Shape>{{1}, {7}, {3, 33}, {2, 2, 1000}})
    for (DType dt : {DType::Float32, DType::Float64}) {
      Tensor x = random(s, ++seed).to(dt), xt = tied_random(s, ++seed).to(dt);
      for (const Tensor& v : {x, xt}) {
        EXPECT_TRUE(topk_matches(v, s.back(), false, sort(v)));
        EXPECT_TRUE(topk_matches(v, s.back(), true, sort(v, true)));
      }
    }
  Tensor x = from_vector(std::vector<double>{2, 1, 2, 1});
  EXPECT_EQ(sort(x).indices.to_vector<int64_t>(), (std::vector<int64_t>{1, 3, 0, 2}));
  EXPECT_EQ(sort(x, true).indices.to_vector<int64_t>(), (std::vector<int64_t>{0, 2, 1, 3}));
  EXPECT_TRUE(topk_matches(transposed_random({4, 7}, 510), 7, false, sort(transposed_random({4, 7}, 510))));
}

TEST(SelectTopk, Gradcheck) {
  for (int64_t k : {1, 3, 5})
    for (bool largest : {true, false}) {
      auto f = [k, largest](const std::vector<Tensor>& a) { return topk(a[0], k, largest).values; };
      EXPECT_TRUE(grad_ok(f, {random({3, 5}, 600 + uint64_t(k))})) << k << largest;
      EXPECT_TRUE(grad_ok(f, {transposed_random({2, 3, 5}, 610 + uint64_t(k))})) << k << largest;
    }
  EXPECT_TRUE(grad_ok([](const std::vector<Tensor>& a) { return topk(a[0], 0).values; }, {random({2, 4}, 620)}));
  EXPECT_TRUE(grad_ok([](const std::vector<Tensor>& a) { return topk(a[0], 2).values; }, {random({7}, 621)}));
  // Second order: a nonlinear use of the values, differentiated twice.
  auto f = [](const Tensor& t) { return sum(square(topk(t, 2).values)); };
  EXPECT_TRUE(grad_ok([f](const std::vector<Tensor>& a) { return grad(f)(a[0]); }, {random({3, 4}, 622)}));
}

TEST(SelectSort, Gradcheck) {
  for (bool descending : {false, true}) {
    auto f = [descending](const std::vector<Tensor>& a) { return sort(a[0], descending).values; };
    EXPECT_TRUE(grad_ok(f, {random({3, 4}, 700)}));
    EXPECT_TRUE(grad_ok(f, {transposed_random({4, 3}, 701)}));
  }
  auto f = [](const Tensor& t) { return sum(sort(t).values * arange(0, 5, 1, DType::Float64) * t); };
  EXPECT_TRUE(grad_ok([f](const std::vector<Tensor>& a) { return grad(f)(a[0]); }, {random({2, 5}, 702)}));
}

TEST(SelectTopk, GradientLandsOnTheChosenEntries) {
  Tensor x = from_vector(std::vector<double>{0.5, -1, 4, 2}).requires_grad_();
  TopK r = topk(x, 2);
  sum(r.values * from_vector(std::vector<double>{10, 100})).backward();
  EXPECT_EQ(x.grad().to_vector<double>(), (std::vector<double>{0, 0, 10, 100}));
  EXPECT_FALSE(r.indices.is_traced());
}

TEST(SelectTopk, BadInput) {
  Tensor x = random({2, 5}, 800);
  EXPECT_EMBER_ERROR(topk(x, 6), "topk: k = 6 is outside [0, 5] for an input of shape [2, 5]");
  EXPECT_EMBER_ERROR(topk(x, -1), "topk: k = -1 is outside [0, 5]");
  EXPECT_EMBER_ERROR(topk(arange(5), 2), "topk: expected a float32 or float64 tensor, got int64");
  EXPECT_EMBER_ERROR(topk(scalar(1.0), 1), "topk: expected a tensor with at least one dimension, got a 0-d");
  EXPECT_EMBER_ERROR(topk(Tensor(), 1), "topk: input is undefined");
  EXPECT_EMBER_ERROR(sort(arange(5)), "sort: expected a float32 or float64 tensor, got int64");
  EXPECT_EMBER_ERROR(sort(scalar(1.0), true), "sort: expected a tensor with at least one dimension");
  EXPECT_EMBER_ERROR(sort(Tensor()), "sort: input is undefined");
}
