#include "ops/embedding/embedding.h"
#include "ops/row_reference.h"

using namespace ember;
using namespace ember::testing;

namespace {

// out[i, :] = w[ids[i], :] by element access.
Tensor ref_embedding(const Tensor& w, const Tensor& ids) {
  std::vector<int64_t> id = ids.to_vector<int64_t>();
  int64_t D = w.size(1);
  std::vector<double> out;
  for (int64_t v : id)
    for (int64_t k = 0; k < D; ++k) out.push_back(w.at({v, k}));
  Shape s = ids.shape();
  s.push_back(D);
  return from_vector(out, s);
}

// out[v, :] = sum of g's rows whose id is v.
Tensor ref_embedding_backward(const Tensor& g, const Tensor& ids, int64_t V) {
  std::vector<int64_t> id = ids.to_vector<int64_t>();
  int64_t D = g.size(-1);
  Tensor gf = g.contiguous().reshape({-1, D});
  std::vector<double> out(size_t(V * D), 0.0);
  for (size_t i = 0; i < id.size(); ++i)
    for (int64_t k = 0; k < D; ++k) out[size_t(id[i] * D + k)] += gf.at({int64_t(i), k});
  return from_vector(out, {V, D});
}

}  // namespace

TEST(Embedding, MatchesReference) {
  Generator g(300);
  for (auto [V, D, ids_shape] : {std::tuple{1, 1, Shape{1}}, std::tuple{7, 3, Shape{5}}, std::tuple{33, 127, Shape{2, 9}},
                                 std::tuple{10, 4, Shape{}}, std::tuple{5, 8, Shape{2, 3, 4}}, std::tuple{4, 2, Shape{0}}}) {
    SCOPED_TRACE(to_string(ids_shape));
    Tensor w = random({V, D}, uint64_t(V * 100 + D));
    Tensor ids = randint(ids_shape, 0, V, &g);
    EXPECT_TRUE(all_close(embedding(w, ids), ref_embedding(w, ids), 0, 0));
    Shape gs = ids_shape;
    gs.push_back(D);
    Tensor gr = random(gs, 301);
    EXPECT_TRUE(all_close(embedding_backward(gr, ids, V), ref_embedding_backward(gr, ids, V), 1e-14, 1e-13));
  }
}

TEST(Embedding, RepeatedIdsAccumulateAndViewsWork) {
  Tensor w = transposed_random({6, 4}, 310);  // (6, 4) transposed view as the table
  Tensor ids = from_vector(std::vector<int64_t>{3, 3, 0, 5, 3, 9, 0, 9}).slice(0, 0, 8, 2);  // {3, 0, 3, 0}
  ASSERT_FALSE(w.is_contiguous());
  EXPECT_TRUE(all_close(embedding(w, ids), ref_embedding(w, ids), 0, 0));
  Tensor gr = random({4, 4}, 311).t();  // non-contiguous cotangent
  Tensor gw = embedding_backward(gr, ids, 6);
  EXPECT_TRUE(all_close(gw, ref_embedding_backward(gr, ids, 6), 1e-14, 1e-13));
  EXPECT_NEAR(gw.at({3, 1}), gr.at({0, 1}) + gr.at({2, 1}), 1e-15);
  EXPECT_EQ(gw.at({1, 2}), 0.0);  // rows no id names get nothing
  // float32 agrees with float64.
  EXPECT_TRUE(all_close(embedding(w.to(DType::Float32), ids), embedding(w, ids), 1e-7, 1e-6));
  EXPECT_TRUE(all_close(embedding_backward(gr.to(DType::Float32), ids, 6), gw, 1e-6, 1e-5));
}

TEST(Embedding, Gradcheck) {
  Tensor w = random({5, 3}, 320);
  Tensor ids = from_vector(std::vector<int64_t>{4, 0, 4, 2, 2, 2}, {2, 3});
  EXPECT_TRUE(grad_ok([ids](const std::vector<Tensor>& a) { return embedding(a[0], ids); }, {w}));
  EXPECT_TRUE(grad_ok([ids](const std::vector<Tensor>& a) { return embedding(a[0], ids); }, {transposed_random({5, 3}, 321)}));
  EXPECT_TRUE(grad_ok([ids](const std::vector<Tensor>& a) { return embedding_backward(a[0], ids, 5); }, {random({2, 3, 3}, 322)}));
  // A nonlinear use so that second derivatives are not zero: grad of grad through both primitives.
  auto f = [ids](const Tensor& t) { return sum(square(embedding(t, ids))); };
  EXPECT_TRUE(grad_ok([f](const std::vector<Tensor>& a) { return grad(f)(a[0]); }, {w}));
  EXPECT_TRUE(grad_ok([ids](const std::vector<Tensor>& a) { return square(embedding_backward(a[0], ids, 5)); },
                      {random({2, 3, 2}, 323)}));
}

TEST(Embedding, BadInput) {
  Tensor w = random({4, 3}, 330);
  EXPECT_EMBER_ERROR(embedding(w, from_vector(std::vector<int64_t>{0, 4})),
                     "embedding: id 4 at flat index 1 is out of range for a table of 4 rows");
  EXPECT_EMBER_ERROR(embedding(w, from_vector(std::vector<int64_t>{-2})), "id -2");
  EXPECT_EMBER_ERROR(embedding(w, from_vector(std::vector<double>{0, 1})), "embedding: ids must be int64, got float64");
  EXPECT_EMBER_ERROR(embedding(random({4}, 1), arange(2)), "embedding: weight must be a 2-d float tensor (V, D)");
  EXPECT_EMBER_ERROR(embedding(arange(6).reshape({2, 3}), arange(2)), "embedding: weight must be a 2-d float tensor");
  EXPECT_EMBER_ERROR(embedding_backward(random({2, 3}, 1), arange(3), 4),
                     "embedding_backward: g has shape [2, 3] but ids of shape [3] need ids.shape + (D)");
  EXPECT_EMBER_ERROR(embedding_backward(random({2, 3}, 1), arange(2), 1), "embedding_backward: id 1");
  EXPECT_EMBER_ERROR(embedding_backward(random({2, 3}, 1), arange(2), -1), "num_embeddings must be >= 0");
}
