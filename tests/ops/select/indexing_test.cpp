// index_select, gather/scatter_add, one_hot and nonzero: values against loops, gradients (repeated
// indices accumulate), and out-of-range indices reported with the op, the index and the size.
#include "ops/reference.h"

using namespace ember;
using namespace ember::testing;

TEST(Indexing, IndexSelectPicksSlicesAndAccumulatesRepeatsInItsGradient) {
  Tensor x = random({4, 3}, 601);
  Tensor idx = from_vector(std::vector<int64_t>{2, 0, 2});
  Tensor rows = index_select(x, 0, idx), cols = index_select(x, -1, from_vector(std::vector<int64_t>{1}, {1}));
  EXPECT_EQ(rows.shape(), (Shape{3, 3}));
  EXPECT_EQ(cols.shape(), (Shape{4, 1}));
  for (int64_t j = 0; j < 3; ++j) {
    EXPECT_EQ(rows.at({0, j}), x.at({2, j}));
    EXPECT_EQ(rows.at({1, j}), x.at({0, j}));
  }
  EXPECT_EQ(cols.at({3, 0}), x.at({3, 1}));
  Tensor g = grad([idx](const Tensor& v) { return sum(index_select(v, 0, idx)); })(x);
  EXPECT_EQ(g.to_vector<double>(), (std::vector<double>{1, 1, 1, 0, 0, 0, 2, 2, 2, 0, 0, 0}));
  EXPECT_TRUE(grad_ok([idx](const std::vector<Tensor>& v) { return index_select(v[0].transpose(0, 1), 1, idx); }, {x}));
  EXPECT_EMBER_ERROR(index_select(x, 0, from_vector(std::vector<int64_t>{1, 4})),
                     "index_select: index 4 is out of range for dim 0 of size 4 (input shape [4, 3])");
  EXPECT_EMBER_ERROR(index_select(x, 0, zeros({2, 1}, DType::Int64)), "index_select: index must be a 1-d int64 tensor");
}

TEST(Indexing, GatherAndScatterAddAreEachOthersTranspose) {
  Tensor x = random({3, 5}, 602), g = random({3, 2}, 603);
  Tensor idx = from_vector(std::vector<int64_t>{4, 4, 0, 1, 3, 2}, {3, 2});
  // <gather(x), g> = <x, scatter_add(0, g)>
  double lhs = sum(gather(x, 1, idx) * g).item();
  double rhs = sum(x * scatter_add(zeros({3, 5}, DType::Float64), 1, idx, g)).item();
  EXPECT_NEAR(lhs, rhs, 1e-13);
  Tensor s = scatter_add(x, 1, idx, g);
  EXPECT_DOUBLE_EQ(s.at({0, 4}), x.at({0, 4}) + g.at({0, 0}) + g.at({0, 1}));
  EXPECT_DOUBLE_EQ(s.at({0, 3}), x.at({0, 3}));
  // Hessian-vector products through gather: d/dx sum(gather(x)^2) = 2 scatter(gather(x)).
  Tensor h = grad([idx](const Tensor& v) { return sum(grad([idx](const Tensor& u) { return sum(square(gather(u, 1, idx))); })(v)); })(x);
  EXPECT_EQ(h.at({0, 4}), 4.0);
  EXPECT_EQ(h.at({1, 0}), 2.0);
  EXPECT_EQ(h.at({1, 2}), 0.0);
  Tensor xi = arange(15).reshape({3, 5});
  EXPECT_EQ(gather(xi, 1, idx).to_vector<int64_t>(), (std::vector<int64_t>{4, 4, 5, 6, 13, 12}));
}

TEST(Indexing, OneHotAndNonzero) {
  Tensor ids = from_vector(std::vector<int64_t>{2, 0, 1, 2}, {2, 2});
  Tensor oh = one_hot(ids);
  EXPECT_EQ(oh.shape(), (Shape{2, 2, 3}));
  EXPECT_EQ(oh.dtype(), DType::Int64);
  EXPECT_EQ(oh.to_vector<int64_t>(), (std::vector<int64_t>{0, 0, 1, 1, 0, 0, 0, 1, 0, 0, 0, 1}));
  EXPECT_EQ(one_hot(ids, 5).shape(), (Shape{2, 2, 5}));
  EXPECT_EMBER_ERROR(one_hot(ids, 2), "one_hot: index 2 is out of range for dim 2 of size 2");
  EXPECT_EMBER_ERROR(one_hot(from_vector(std::vector<int64_t>{-1})), "one_hot: index -1 is out of range");
  EXPECT_EMBER_ERROR(one_hot(random({2}, 1)), "one_hot: indices must be an int64 tensor, got float64");
  Tensor x = from_vector(std::vector<double>{0, 1.5, 0, 0, -2, 0}, {2, 3});
  EXPECT_EQ(nonzero(x).to_vector<int64_t>(), (std::vector<int64_t>{0, 1, 1, 1}));
  EXPECT_EQ(nonzero(x).shape(), (Shape{2, 2}));
  EXPECT_EQ(nonzero(zeros({3}, DType::Float64)).shape(), (Shape{0, 1}));
  EXPECT_EQ(nonzero(x.transpose(0, 1)).to_vector<int64_t>(), (std::vector<int64_t>{1, 0, 1, 1}));
}
