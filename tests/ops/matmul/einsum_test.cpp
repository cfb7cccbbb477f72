// einsum against matmul, bmm, outer, trace and plain loops; gradients through it; bad equations.
#include "ops/reference.h"

using namespace ember;
using namespace ember::testing;

TEST(Einsum, MatchesMatmulBmmOuterAndTrace) {
  Tensor a = random({3, 4}, 801), b = random({4, 5}, 802);
  EXPECT_TRUE(all_close(einsum("ij,jk->ik", {a, b}), matmul(a, b), 1e-13, 1e-13));
  EXPECT_TRUE(all_close(einsum("ij,jk", {a, b}), matmul(a, b), 1e-13, 1e-13));  // implicit output
  EXPECT_TRUE(all_close(einsum("ij,jk->ki", {a, b}), matmul(a, b).transpose(0, 1), 1e-13, 1e-13));
  Tensor p = random({2, 3, 4}, 803), q = random({2, 4, 5}, 804);
  EXPECT_TRUE(all_close(einsum("bij,bjk->bik", {p, q}), matmul(p, q), 1e-13, 1e-13));
  Tensor u = random({3}, 805), w = random({4}, 806);
  Tensor outer = einsum("i,j->ij", {u, w});
  for_each_index({3, 4}, [&](const Shape& i) { EXPECT_DOUBLE_EQ(outer.at(i), u.at({i[0]}) * w.at({i[1]})); });
  Tensor sq = random({4, 4}, 807);
  double tr = 0;
  for (int64_t i = 0; i < 4; ++i) tr += sq.at({i, i});
  EXPECT_NEAR(einsum("ii->", {sq}).item(), tr, 1e-14);
  EXPECT_TRUE(all_close(einsum("ii->i", {sq}), ref_tensor({4}, [&](const Shape& i) { return sq.at({i[0], i[0]}); }), 0, 0));
  EXPECT_TRUE(all_close(einsum("ij->ji", {a}), a.transpose(0, 1), 0, 0));
  EXPECT_NEAR(einsum("ij->", {a}).item(), sum(a).item(), 1e-14);
  EXPECT_NEAR(einsum("i,i->", {u, u}).item(), sum(u * u).item(), 1e-14);
}

TEST(Einsum, ThreeOperandsAndGradients) {
  Tensor a = random({2, 3}, 811), b = random({3, 4}, 812), c = random({4, 2}, 813);
  EXPECT_TRUE(all_close(einsum("ij,jk,kl->il", {a, b, c}), matmul(matmul(a, b), c), 1e-13, 1e-13));
  // A contraction with a batch letter that is also summed on one side: sum_j a[b,i,j] x[b,j].
  Tensor p = random({2, 3, 4}, 814), x = random({2, 4}, 815);
  Tensor r = einsum("bij,bj->bi", {p, x});
  for_each_index({2, 3}, [&](const Shape& i) {
    double acc = 0;
    for (int64_t j = 0; j < 4; ++j) acc += p.at({i[0], i[1], j}) * x.at({i[0], j});
    EXPECT_NEAR(r.at(i), acc, 1e-14);
  });
  EXPECT_TRUE(grad_ok([](const std::vector<Tensor>& v) { return einsum("bij,bj->bi", {v[0], v[1]}); }, {p, x}));
  EXPECT_TRUE(grad_ok([](const std::vector<Tensor>& v) { return einsum("ii->", {v[0]}); }, {random({3, 3}, 816)}));
}

TEST(Einsum, RejectsBadEquations) {
  Tensor a = random({3, 4}, 1), b = random({5, 6}, 2);
  EXPECT_EMBER_ERROR(einsum("ij,jk->ik", {a, b}), "einsum: 'j' is 4 in one place and 5 in operand 1 of shape [5, 6]");
  EXPECT_EMBER_ERROR(einsum("ij,jk->ik", {a}), "einsum: 'ij,jk->ik' names 2 operands but 1 were given");
  EXPECT_EMBER_ERROR(einsum("ijk->i", {a}), "einsum: operand 0 has shape [3, 4] but 'ijk' names 3 dims");
  EXPECT_EMBER_ERROR(einsum("ij->iz", {a}), "einsum: output letter 'z' of 'ij->iz' is in no operand");
  EXPECT_EMBER_ERROR(einsum("ij->ii", {a}), "einsum: output letter 'i' of 'ij->ii' appears twice");
  EXPECT_EMBER_ERROR(einsum("...j->j", {a}), "no '...' broadcasting");
}
