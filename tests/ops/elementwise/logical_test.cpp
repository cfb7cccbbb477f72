// Logical ops on masks: truth tables against plain loops, broadcasting, views, numeric operands
// (nonzero is true), any/all, sum counting the true elements, and no autograd recording.
#include "ops/reference.h"

using namespace ember;
using namespace ember::testing;

namespace {
Tensor random_mask(const Shape& shape, uint64_t seed) { return gt(random(shape, seed), zeros({}, DType::Float64)); }
}  // namespace

TEST(Logical, BinaryOpsMatchTheirTruthTables) {
  struct C {
    const char* name;
    std::function<Tensor(const Tensor&, const Tensor&)> op;
    std::function<bool(bool, bool)> ref;
  };
  std::vector<C> cs = {
      {"logical_and", [](const Tensor& a, const Tensor& b) { return logical_and(a, b); }, [](bool p, bool q) { return p && q; }},
      {"logical_or", [](const Tensor& a, const Tensor& b) { return logical_or(a, b); }, [](bool p, bool q) { return p || q; }},
      {"logical_xor", [](const Tensor& a, const Tensor& b) { return logical_xor(a, b); }, [](bool p, bool q) { return p != q; }},
  };
  Tensor a = random_mask({3, 1, 4}, 1), b = random_mask({2, 4}, 2);
  Tensor at = random_mask({4, 3}, 3).t(), bt = random_mask({3, 4}, 4);
  for (const C& c : cs) {
    SCOPED_TRACE(c.name);
    Tensor r = c.op(a, b);
    EXPECT_EQ(r.dtype(), DType::Bool);
    auto ref = [&](double p, double q) { return c.ref(p != 0, q != 0) ? 1.0 : 0.0; };
    EXPECT_TRUE(all_close(r, ref_binary(a.to(DType::Float64), b.to(DType::Float64), ref), 0, 0));
    EXPECT_TRUE(all_close(c.op(at, bt), ref_binary(at.to(DType::Float64), bt.to(DType::Float64), ref), 0, 0));
    // Numeric operands count as true where nonzero, each in its own dtype.
    Generator g(5);
    Tensor ia = randint({3, 1, 4}, -1, 2, &g);
    Tensor fb = from_vector(std::vector<double>{0.0, 1e-50, -3.0, 0.0, 0.5, 0.0, 2.0, -0.0}, {2, 4});
    EXPECT_TRUE(all_close(c.op(ia, fb), ref_binary(ia.to(DType::Float64), fb, ref), 0, 0));
    EXPECT_EQ(c.op(ia, fb).dtype(), DType::Bool);
    EXPECT_EMBER_ERROR(c.op(a, random_mask({5}, 6)), std::string(c.name) + ":");
    EXPECT_EMBER_ERROR(c.op(Tensor(), b), std::string(c.name) + ": an operand is undefined");
  }
}

TEST(Logical, NotAnyAll) {
  Tensor m = random_mask({3, 5}, 7);
  Tensor n = logical_not(m);
  EXPECT_EQ(n.dtype(), DType::Bool);
  for_each_index({3, 5}, [&](const Shape& i) { EXPECT_EQ(n.at(i), m.at(i) != 0 ? 0.0 : 1.0); });
  Tensor f = random({4}, 8);
  f.set({2}, 0.0);
  EXPECT_EQ(logical_not(f).to_vector<bool>(), (std::vector<bool>{false, false, true, false}));
  EXPECT_EQ(logical_not(m.t()).t().to_vector<bool>(), n.to_vector<bool>());

  EXPECT_EQ(any(m).dtype(), DType::Bool);
  EXPECT_EQ(any(m).dim(), 0);
  EXPECT_TRUE(any(f).item());
  EXPECT_FALSE(all(f).item());
  EXPECT_TRUE(all(f.slice(0, 0, 2)).item());
  EXPECT_FALSE(any(zeros({3}, DType::Bool)).item());
  EXPECT_TRUE(all(ones({3}, DType::Bool)).item());
  EXPECT_TRUE(all(zeros({0})).item());  // every element of nothing, as in PyTorch
  EXPECT_FALSE(any(zeros({0})).item());
  std::vector<bool> mv = m.to_vector<bool>();
  bool any_ref = false, all_ref = true;
  for (bool v : mv) any_ref |= v, all_ref &= v;
  EXPECT_EQ(any(m).item() != 0, any_ref);
  EXPECT_EQ(all(m).item() != 0, all_ref);
  EXPECT_EMBER_ERROR(logical_not(Tensor()), "logical_not");
  EXPECT_EMBER_ERROR(any(Tensor()), "any");
}

TEST(Logical, SumOfAMaskCountsItsTrueElements) {
  Tensor m = random_mask({4, 6}, 9);
  Tensor s = sum(m);
  EXPECT_EQ(s.dtype(), DType::Int64);
  int64_t count = 0;
  for (bool v : m.to_vector<bool>()) count += v;
  EXPECT_EQ(int64_t(s.item()), count);
  EXPECT_TRUE(all_close(m.sum(1), sum(m.to(DType::Int64), {1}), 0, 0));
  EXPECT_GT(count, 0);
  EXPECT_LT(count, 24);
}

TEST(Logical, ResultsAreNeverTraced) {
  Tensor x = random({4}, 10).requires_grad_();
  Tensor m = gt(x, zeros({}, DType::Float64));
  EXPECT_FALSE(m.is_traced());
  EXPECT_FALSE(m.requires_grad());
  EXPECT_FALSE(logical_and(x, m).requires_grad());
  EXPECT_FALSE(logical_not(x).requires_grad());
  EXPECT_EMBER_ERROR(m.requires_grad_(), "only floating tensors");
}
