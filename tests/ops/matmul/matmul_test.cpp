// matmul: every CPU variant against a float64 triple loop on awkward sizes (1, 7, 33, non-square),
// transposed and strided operands, batches with broadcast batch dims, NumPy's 1-d promotion;
// gradcheck (VJP, JVP, dot product) including second derivatives; bad input.
#include "ops/op_list.h"
#include "ops/reference.h"
#include "study_kernels.h"

using namespace ember;
using namespace ember::testing;

namespace {

// NumPy matmul semantics, written out: promote 1-d operands, broadcast batch dims, sum over k.
Tensor ref_matmul(const Tensor& a0, const Tensor& b0) {
  Tensor a = a0.dim() == 1 ? a0.unsqueeze(0) : a0;
  Tensor b = b0.dim() == 1 ? b0.unsqueeze(1) : b0;
  int64_t m = a.shape()[a.shape().size() - 2], k = a.shape().back(), n = b.shape().back();
  Shape ab(a.shape().begin(), a.shape().end() - 2), bb(b.shape().begin(), b.shape().end() - 2);
  Shape batch = ref_broadcast(ab, bb), out = batch;
  out.push_back(m);
  out.push_back(n);
  Tensor c = ref_tensor(out, [&](const Shape& i) {
    Shape bi(i.begin(), i.end() - 2);
    Shape ia = broadcast_index(bi, ab), ib = broadcast_index(bi, bb);
    ia.push_back(i[i.size() - 2]);
    ia.push_back(0);
    ib.push_back(0);
    ib.push_back(i.back());
    double s = 0;
    for (int64_t p = 0; p < k; ++p) {
      ia.back() = p;
      ib[ib.size() - 2] = p;
      s += a.at(ia) * b.at(ib);
    }
    return s;
  });
  if (a0.dim() == 1 && b0.dim() == 1) return c.reshape({});
  if (a0.dim() == 1) return c.squeeze(-2);
  if (b0.dim() == 1) return c.squeeze(-1);
  return c;
}

// The library's kernel and the study's naive loop (registered by with()).
const std::vector<std::string> kCpuImpls = {"auto", "naive"};

MatmulOptions with(const std::string& impl) {
  register_study_kernels();
  MatmulOptions o;
  o.impl = impl;
  return o;
}

}  // namespace

TEST(Matmul, AwkwardSizesMatchReference) {
  for (int64_t m : {1, 7, 33})
    for (int64_t k : {1, 7, 33})
      for (int64_t n : {1, 7, 33}) {
        Tensor a = random({m, k}, uint64_t(m * 100 + k)), b = random({k, n}, uint64_t(k * 100 + n + 1));
        Tensor ref = ref_matmul(a, b);
        for (const std::string& impl : kCpuImpls) {
          EXPECT_TRUE(all_close(matmul(a, b, with(impl)), ref, 1e-12, 1e-12)) << impl << " " << m << "x" << k << "x" << n;
          Tensor c32 = matmul(a.to(DType::Float32), b.to(DType::Float32), with(impl));
          EXPECT_EQ(c32.dtype(), DType::Float32);
          EXPECT_TRUE(all_close(c32.to(DType::Float64), ref, 1e-4, 1e-4)) << impl << " f32 " << m << "x" << k << "x" << n;
        }
      }
}

TEST(Matmul, SizesThatSplitAcrossThreads) {
  // Large enough that the i-k-j kernel splits rows of C across threads.
  Tensor a = random({130, 64}, 60), b = transposed_random({64, 70}, 61);
  Tensor ref = ref_matmul(a, b);
  EXPECT_TRUE(all_close(matmul(a, b), ref, 1e-11, 1e-11));
  EXPECT_TRUE(all_close(matmul(a.to(DType::Float32), b.to(DType::Float32)).to(DType::Float64), ref, 1e-3, 1e-4));
}

TEST(Matmul, NonContiguousOperands) {
  struct P {
    const char* what;
    Tensor a, b;
  };
  std::vector<P> ps = {
      {"A^T", transposed_random({7, 5}, 1), random({5, 3}, 2)},
      {"B^T", random({7, 5}, 3), transposed_random({5, 3}, 4)},
      {"A^T B^T", transposed_random({33, 7}, 5), transposed_random({7, 33}, 6)},
      {"strided", strided_random({4, 6}, 7), strided_random({6, 5}, 8)},
      {"expanded rows", expanded_random({4, 6}, 9), random({6, 2}, 10)},
      {"sliced rows with step", random({9, 4}, 11).slice(0, 1, 9, 3), random({4, 3}, 12)},
  };
  for (const P& p : ps) {
    Tensor ref = ref_matmul(p.a, p.b);
    for (const std::string& impl : kCpuImpls) {
      EXPECT_TRUE(all_close(matmul(p.a, p.b, with(impl)), ref, 1e-12, 1e-12)) << p.what << " " << impl;
      EXPECT_TRUE(all_close(matmul(p.a.to(DType::Float32), p.b.to(DType::Float32), with(impl)).to(DType::Float64), ref, 1e-4,
                            1e-4)) << p.what;
    }
  }
}

TEST(Matmul, BatchedWithBroadcastBatchDims) {
  struct P {
    Shape a, b;
  };
  std::vector<P> ps = {
      {{3, 4, 5}, {3, 5, 2}},      {{3, 4, 5}, {5, 2}},       {{4, 5}, {3, 5, 2}},
      {{2, 1, 4, 5}, {3, 5, 2}},   {{1, 4, 5}, {2, 3, 5, 7}}, {{2, 3, 1, 5}, {1, 5, 1}},
  };
  for (const P& p : ps) {
    Tensor a = random(p.a, 13), b = random(p.b, 14);
    Tensor ref = ref_matmul(a, b);
    for (const std::string& impl : kCpuImpls)
      EXPECT_TRUE(all_close(matmul(a, b, with(impl)), ref, 1e-12, 1e-12)) << to_string(p.a) << " @ " << to_string(p.b);
  }
  // Batched transposed views (the batch dim strided too).
  Tensor a = random({4, 3, 2}, 15).permute({2, 0, 1});  // [2, 4, 3], batch stride 1
  Tensor b = transposed_random({2, 3, 5}, 16);
  EXPECT_TRUE(all_close(matmul(a, b), ref_matmul(a, b), 1e-12, 1e-12));
  Tensor be = random({1, 3, 5}, 17).expand({2, 3, 5});
  EXPECT_TRUE(all_close(matmul(a, be), ref_matmul(a, be), 1e-12, 1e-12));
}

TEST(Matmul, OneDimensionalOperands) {
  Tensor v = random({5}, 18), w = random({5}, 19), m = random({5, 3}, 20), mt = random({3, 5}, 21), bt = random({2, 5, 3}, 22);
  Tensor dot = matmul(v, w);
  EXPECT_EQ(dot.dim(), 0);
  EXPECT_TRUE(all_close(dot, ref_matmul(v, w), 1e-12));
  EXPECT_EQ(matmul(v, m).shape(), (Shape{3}));
  EXPECT_TRUE(all_close(matmul(v, m), ref_matmul(v, m), 1e-12));
  EXPECT_EQ(matmul(mt, v).shape(), (Shape{3}));
  EXPECT_TRUE(all_close(matmul(mt, v), ref_matmul(mt, v), 1e-12));
  EXPECT_EQ(matmul(v, bt).shape(), (Shape{2, 3}));
  EXPECT_TRUE(all_close(matmul(v, bt), ref_matmul(v, bt), 1e-12));
  EXPECT_EQ(matmul(bt.transpose(1, 2), v).shape(), (Shape{2, 3}));
  EXPECT_TRUE(all_close(matmul(bt.transpose(1, 2), v), ref_matmul(bt.transpose(1, 2), v), 1e-12));
}

TEST(Matmul, EmptyDims) {
  Tensor c = matmul(random({3, 0}, 23), random({0, 4}, 24));
  EXPECT_EQ(c.shape(), (Shape{3, 4}));
  EXPECT_TRUE(all_close(c, zeros({3, 4}, DType::Float64)));
  EXPECT_EQ(matmul(random({0, 2}, 25), random({2, 4}, 26)).shape(), (Shape{0, 4}));
  EXPECT_EQ(matmul(random({0, 3, 2}, 25), random({2, 4}, 26)).shape(), (Shape{0, 3, 4}));
}

TEST(Matmul, ImplSelection) {
  register_study_kernels();
  EXPECT_EQ(parse_matmul_impl("naive"), "naive");
  EXPECT_EQ(parse_matmul_impl("cublas", Device::CUDA), "cublas");
  for (Device d : {Device::CPU, Device::CUDA})
    for (const std::string& v : matmul_variants(d)) EXPECT_EQ(parse_matmul_impl(v, d), v);
  EXPECT_EMBER_ERROR(parse_matmul_impl("fast"), "fast");
  Tensor a = random({3, 4}, 27), b = random({4, 2}, 28);
  {
    ScopedVariant use("matmul", "naive");
    EXPECT_TRUE(all_close(matmul(a, b), ref_matmul(a, b), 1e-12));
  }
  // A CUDA-only variant on the CPU is an error naming matmul and the variant.
  EXPECT_EMBER_ERROR(matmul(a, b, with("tiled")), "matmul");
  EXPECT_EMBER_ERROR(matmul(a, b, with("tiled")), "tiled");
}

TEST(Matmul, Gradcheck) {
  struct P {
    const char* what;
    Tensor a, b;
  };
  std::vector<P> ps = {
      {"2-d", random({3, 4}, 29), random({4, 2}, 30)},
      {"1 x k @ k x 1", random({1, 3}, 31), random({3, 1}, 32)},
      {"batched broadcast", random({2, 1, 2, 3}, 33), random({3, 3, 2}, 34)},
      {"batched @ 2-d", random({2, 3, 4}, 35), random({4, 2}, 36)},
      {"vector @ vector", random({4}, 37), random({4}, 38)},
      {"vector @ batched", random({3}, 39), random({2, 3, 2}, 40)},
      {"matrix @ vector", random({2, 3}, 41), random({3}, 42)},
      {"transposed", transposed_random({3, 4}, 43), transposed_random({4, 2}, 44)},
      {"strided and expanded", strided_random({2, 3}, 45), expanded_random({2, 3, 2}, 46)},
  };
  for (const P& p : ps) {
    EXPECT_TRUE(grad_ok([](const std::vector<Tensor>& in) { return matmul(in[0], in[1]); }, {p.a, p.b})) << p.what;
    EXPECT_TRUE(grad_ok([](const std::vector<Tensor>& in) { return matmul(in[0], in[1], with("naive")); },
                        {p.a, p.b})) << p.what;
  }
  // One operand traced.
  Tensor w = random({4, 2}, 47);
  EXPECT_TRUE(grad_ok([&](const std::vector<Tensor>& in) { return matmul(in[0], w); }, {random({2, 3, 4}, 48)}));
  EXPECT_TRUE(grad_ok([&](const std::vector<Tensor>& in) { return matmul(random({2, 3, 4}, 48), in[0]); }, {w}));
}

TEST(Matmul, SecondDerivatives) {
  Tensor a = random({2, 3}, 49), b = random({3, 2}, 50);
  auto loss = [](const std::vector<Tensor>& v) {
    Tensor c = matmul(v[0], v[1]);
    return sum(c * c);
  };
  EXPECT_TRUE(grad_ok([&](const std::vector<Tensor>& in) { return grad(loss, 0)(in); }, {a, b}));
  EXPECT_TRUE(grad_ok([&](const std::vector<Tensor>& in) { return grad(loss, 1)(in); }, {a, b}));
  // With 1-d operands (unsqueeze/squeeze views inside matmul).
  Tensor W = random({3, 4}, 51);
  EXPECT_TRUE(grad_ok([&](const std::vector<Tensor>& in) {
    return grad([&](const Tensor& x) { Tensor h = tanh(matmul(W, x)); return sum(h * h); })(in[0]);
  }, {random({4}, 52)}));
}

TEST(Matmul, Errors) {
  Tensor a = random({2, 3}, 53);
  EXPECT_EMBER_ERROR(matmul(a, random({4, 2}, 1)), "matmul: inner dimensions differ");
  EXPECT_EMBER_ERROR(matmul(a, random({4, 2}, 1)), "[2, 3]");
  EXPECT_EMBER_ERROR(matmul(a, random({4}, 1)), "matmul:");
  EXPECT_EMBER_ERROR(matmul(random({4}, 1), random({3}, 2)), "matmul:");
  EXPECT_EMBER_ERROR(matmul(a, random({3, 2}, 1).to(DType::Float32)), "matmul: dtype mismatch");
  EXPECT_EMBER_ERROR(matmul(arange(6).reshape({2, 3}), arange(6).reshape({3, 2})), "matmul:");
  EXPECT_EMBER_ERROR(matmul(scalar(1.0, DType::Float64), a), "matmul:");
  EXPECT_EMBER_ERROR(matmul(random({2, 2, 3}, 1), random({3, 3, 2}, 2)), "matmul:");  // batch 2 vs 3
  EXPECT_EMBER_ERROR(matmul(a, Tensor()), "matmul:");
}

// A stack times one shared matrix runs as one GEMM over the stack's rows where A's batch and row
// dims make one stride, and B's gradient is one product over those rows: values and both gradients
// against the triple loop, for stacks that fold (contiguous, a row slice of a taller stack, float32
// large enough for threads) and stacks that do not (batch dims transposed, rows strided, A
// broadcast), and for empty dims, where B's gradient is zeros of B's shape.
TEST(Matmul, StackTimesSharedMatrixFoldsIntoOneProduct) {
  struct P {
    const char* what;
    Tensor a, b;
  };
  Tensor tall = random({3, 9, 5}, 60);
  std::vector<P> ps = {
      {"contiguous (2, 3, 7) @ (7, 5)", random({2, 3, 7}, 61), random({7, 5}, 62)},
      {"(2, 2, 3, 5) @ (5, 4)", random({2, 2, 3, 5}, 63), random({5, 4}, 64)},
      {"batch dims transposed", random({3, 2, 4, 5}, 65).transpose(0, 1), random({5, 3}, 66)},
      {"rows a slice of a taller stack", tall.narrow(1, 2, 4), random({5, 6}, 67)},
      {"rows strided", strided_random({2, 4, 5}, 68), transposed_random({5, 3}, 69)},
      {"A broadcast over the batch", random({1, 4, 5}, 70).expand({3, 4, 5}), random({5, 2}, 71)},
      {"float32 across threads", random({12, 64, 128}, 72).to(DType::Float32), random({128, 96}, 73).to(DType::Float32)},
  };
  for (const P& p : ps) {
    SCOPED_TRACE(p.what);
    const bool f32 = p.a.dtype() == DType::Float32;
    const double tol = f32 ? 2e-4 : 1e-12;
    Tensor a64 = p.a.to(DType::Float64), b64 = p.b.to(DType::Float64);
    EXPECT_TRUE(all_close(matmul(p.a, p.b), ref_matmul(a64, b64), tol, f32 ? 1e-4 : 1e-12));
    Tensor a = p.a.detach().requires_grad_(), b = p.b.detach().requires_grad_();
    Tensor u = random(matmul(p.a, p.b).shape(), 74).to(p.a.dtype());
    sum(matmul(a, b) * u).backward();
    // d/dB sum(u * A B) = sum over the stack of A_i^T u_i; d/dA = u B^T.
    Tensor u64 = u.to(DType::Float64);
    Tensor gb = ref_matmul(a64.transpose(-2, -1), u64);
    while (gb.dim() > 2) gb = sum(gb, {0});
    EXPECT_TRUE(all_close(b.grad(), gb, tol, f32 ? 1e-4 : 1e-12));
    EXPECT_TRUE(all_close(a.grad(), ref_matmul(u64, b64.transpose(0, 1)), tol, f32 ? 1e-4 : 1e-12));
  }
  for (const Shape& as : {Shape{2, 3, 0}, Shape{2, 0, 4}, Shape{0, 3, 4}}) {
    const int64_t n = 2;
    Tensor a = random(as, 75).requires_grad_(), b = random({as.back(), n}, 76).requires_grad_();
    sum(matmul(a, b)).backward();
    EXPECT_EQ(b.grad().shape(), (Shape{as.back(), n}));
    EXPECT_EQ(a.grad().shape(), as);
    if (b.grad().numel()) EXPECT_EQ(b.grad().abs().sum().item(), 0.0);
  }
  EXPECT_TRUE(grad_ok([](const std::vector<Tensor>& in) { return matmul(in[0], in[1]); },
                      {random({2, 2, 3, 4}, 77), random({4, 3}, 78)}));
  EXPECT_TRUE(grad_ok([](const std::vector<Tensor>& in) { return matmul(in[0], in[1]); },
                      {random({2, 3, 4}, 79).transpose(0, 1), random({4, 2}, 80)}));
}
