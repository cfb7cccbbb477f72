// Every CUDA primitive against its CPU counterpart (itself checked against float64 references
// elsewhere), over contiguous, transposed, sliced and broadcast operands; and gradients computed
// on the GPU against the same gradients on the CPU. Skipped without a GPU.
#include "test_util.h"
#include "cuda_test_util.h"

using namespace ember;
using namespace ember::testing;

namespace {

Tensor gpu(const Tensor& t) { return t.to(Device::CUDA); }
Tensor cpu(const Tensor& t) { return t.to(Device::CPU); }

// Inputs of several layouts with the same logical shape (4, 6, 5).
std::vector<Tensor> layouts(uint64_t seed, bool positive = false) {
  Tensor base = random({4, 6, 5}, seed, positive);
  Tensor wide = random({4, 6, 9}, seed + 1, positive);
  return {base,                                                       // contiguous
          random({5, 6, 4}, seed + 2, positive).permute({2, 1, 0}),   // transposed
          wide.slice(2, 0, 9, 2),                                     // every other column
          random({4, 1, 5}, seed + 3, positive).expand({4, 6, 5})};   // broadcast (stride 0)
}

}  // namespace

TEST(CudaOps, UnaryMatchesCpu) {
  EMBER_SKIP_WITHOUT_GPU();
  using F = Tensor (*)(const Tensor&);
  std::vector<std::pair<const char*, F>> fns = {{"neg", neg},   {"exp", exp},         {"sin", sin},   {"cos", cos},
                                                {"tanh", tanh}, {"sigmoid", sigmoid}, {"relu", relu}, {"erf", erf},
                                                {"abs", abs},   {"square", square}};
  for (DType dt : {DType::Float32, DType::Float64})
    for (const Tensor& x64 : layouts(11)) {
      Tensor x = x64.to(dt);
      for (auto& [nm, f] : fns) EXPECT_TRUE(all_close(cpu(f(gpu(x))), f(x), 1e-6, 1e-5)) << nm << " " << dt;
      EXPECT_TRUE(all_close(cpu(gelu(gpu(x))), gelu(x), 1e-6, 1e-5));
      EXPECT_TRUE(all_close(cpu(gelu(gpu(x), true)), gelu(x, true), 1e-6, 1e-5));
    }
  Tensor p = random({33, 7}, 12, true);
  EXPECT_TRUE(all_close(cpu(log(gpu(p))), log(p), 1e-12, 1e-12));
  EXPECT_TRUE(all_close(cpu(sqrt(gpu(p))), sqrt(p), 1e-12, 1e-12));
}

TEST(CudaOps, BinaryBroadcastsLikeCpu) {
  EMBER_SKIP_WITHOUT_GPU();
  std::vector<std::pair<Shape, Shape>> shapes = {{{4, 6, 5}, {4, 6, 5}}, {{4, 6, 5}, {5}},   {{4, 1, 5}, {6, 1}},
                                                 {{1}, {3, 7}},          {{}, {2, 3}},       {{127}, {127}}};
  for (auto& [sa, sb] : shapes) {
    Tensor a = random(sa, 21), b = random(sb, 22, true);
    EXPECT_TRUE(all_close(cpu(gpu(a) + gpu(b)), a + b, 0, 0));
    EXPECT_TRUE(all_close(cpu(gpu(a) - gpu(b)), a - b, 0, 0));
    EXPECT_TRUE(all_close(cpu(gpu(a) * gpu(b)), a * b, 0, 0));
    EXPECT_TRUE(all_close(cpu(gpu(a) / gpu(b)), a / b, 1e-15, 1e-15));
    EXPECT_TRUE(all_close(cpu(pow(gpu(b), gpu(a))), pow(b, a), 1e-12, 1e-12));
    EXPECT_TRUE(all_close(cpu(maximum(gpu(a), gpu(b))), maximum(a, b), 0, 0));
    EXPECT_TRUE(all_close(cpu(minimum(gpu(a), gpu(b))), minimum(a, b), 0, 0));
    EXPECT_TRUE(all_close(cpu(gt(gpu(a), gpu(b))), gt(a, b), 0, 0));
    EXPECT_TRUE(all_close(cpu(le(gpu(a), gpu(b))), le(a, b), 0, 0));
    EXPECT_TRUE(all_close(cpu(eq(gpu(a), gpu(a))), eq(a, a), 0, 0));
  }
  Tensor t = random({5, 4}, 23), u = random({4, 5}, 24);
  EXPECT_TRUE(all_close(cpu(gpu(t).t() * gpu(u)), t.t() * u, 0, 0));  // strided operand
  Tensor i = randint({6, 3}, -20, 20), j = randint({3}, 1, 5);
  EXPECT_TRUE(all_close(cpu(gpu(i) / gpu(j)), i / j, 0, 0));  // int64
  EXPECT_TRUE(all_close(cpu(gpu(i) * gpu(j)), i * j, 0, 0));
}

TEST(CudaOps, WhereCastAndCopyMatchCpu) {
  EMBER_SKIP_WITHOUT_GPU();
  Tensor a = random({3, 4, 5}, 31), b = random({4, 1}, 32), c = gt(random({5}, 33), zeros({}, DType::Float64));
  EXPECT_TRUE(all_close(cpu(where(gpu(c), gpu(a), gpu(b))), where(c, a, b), 0, 0));
  Tensor ci = c.to(DType::Int64);
  EXPECT_TRUE(all_close(cpu(where(gpu(ci), gpu(a), gpu(b))), where(ci, a, b), 0, 0));
  EXPECT_TRUE(all_close(cpu(masked_fill(gpu(a), gpu(c), -7.0)), masked_fill(a, c, -7.0), 0, 0));
  for (DType from : {DType::Float32, DType::Float64, DType::Int64, DType::Bool})
    for (DType to : {DType::Float32, DType::Float64, DType::Int64, DType::Bool}) {
      Tensor x = (random({6, 7}, 34) * 10.0).to(from).t();
      EXPECT_TRUE(all_close(cpu(gpu(x).to(to)), x.to(to), 0, 0)) << from << " -> " << to;
    }
  Tensor big = random({2, 3, 4, 5, 6}, 35);
  Tensor v = gpu(big).permute({4, 2, 0, 3, 1}).slice(1, 1, 4, 2);
  EXPECT_TRUE(all_close(cpu(v.contiguous()), big.permute({4, 2, 0, 3, 1}).slice(1, 1, 4, 2), 0, 0));
  EXPECT_TRUE(all_close(cpu(concat({gpu(a), gpu(a) * 2.0}, 1)), concat({a, a * 2.0}, 1), 0, 0));
}

TEST(CudaOps, BoolMasksMatchCpu) {
  EMBER_SKIP_WITHOUT_GPU();
  Tensor x = random({4, 6}, 36), y = random({6}, 37);
  Tensor p = gt(x, zeros({}, DType::Float64)), q = lt(y, zeros({}, DType::Float64));
  Tensor gp = gt(gpu(x), gpu(zeros({}, DType::Float64))), gq = gpu(q);
  EXPECT_EQ(gp.dtype(), DType::Bool);
  EXPECT_TRUE(all_close(cpu(gp), p, 0, 0));
  EXPECT_TRUE(all_close(cpu(ne(gp, gq)), ne(p, q), 0, 0));  // Bool operands on the GPU
  EXPECT_TRUE(all_close(cpu(logical_and(gp, gq)), logical_and(p, q), 0, 0));
  EXPECT_TRUE(all_close(cpu(logical_or(gp.t().contiguous().t(), gq)), logical_or(p, q), 0, 0));
  EXPECT_TRUE(all_close(cpu(logical_xor(gp, gq)), logical_xor(p, q), 0, 0));
  EXPECT_TRUE(all_close(cpu(logical_not(gp)), logical_not(p), 0, 0));
  EXPECT_TRUE(all_close(cpu(gpu(x) * gp), x * p, 0, 0));  // promotion
  EXPECT_TRUE(all_close(cpu(sum(gp)), sum(p), 0, 0));
  EXPECT_EQ(cpu(any(gp)).item(), any(p).item());
  EXPECT_EQ(cpu(all(gq)).item(), all(q).item());
  EXPECT_TRUE(all_close(cpu(where(gp, gpu(x), gpu(y))), where(p, x, y), 0, 0));
  EXPECT_TRUE(all_close(cpu(zeros({3}, DType::Bool, Device::CUDA)), zeros({3}, DType::Bool), 0, 0));
}

TEST(CudaOps, ReductionsMatchCpu) {
  EMBER_SKIP_WITHOUT_GPU();
  for (DType dt : {DType::Float32, DType::Float64}) {
    Tensor x = random({7, 33, 127}, 41).to(dt);
    Tensor g = gpu(x);
    double tol = dt == DType::Float32 ? 1e-5 : 1e-12;
    for (Shape dims : std::vector<Shape>{{}, {0}, {1}, {2}, {0, 2}, {1, 2}, {0, 1}}) {
      EXPECT_TRUE(all_close(cpu(sum(g, dims)), sum(x, dims), tol, tol)) << to_string(dims);
      EXPECT_TRUE(all_close(cpu(mean(g, dims, true)), mean(x, dims, true), tol, tol)) << to_string(dims);
    }
    for (int64_t d = 0; d < 3; ++d) {
      EXPECT_TRUE(all_close(cpu(max(g, d)), max(x, d), 0, 0)) << d;
      EXPECT_TRUE(all_close(cpu(max(g, d, true)), max(x, d, true), 0, 0)) << d;
      EXPECT_TRUE(all_close(cpu(argmax(g, d)), argmax(x, d), 0, 0)) << d;
      EXPECT_TRUE(all_close(cpu(max(g.t(), d)), max(x.t(), d), 0, 0)) << d;  // non-contiguous input
    }
    EXPECT_TRUE(all_close(cpu(max(g)), max(x), 0, 0));
  }
  Tensor ties = from_vector(std::vector<double>{1, 5, 5, 2, 5, 0}, {2, 3});
  EXPECT_TRUE(all_close(cpu(argmax(gpu(ties), 1)), argmax(ties, 1), 0, 0));  // the first of equal maxima
  Tensor longrow = random({3, 5000}, 42);                                      // more elements than threads
  EXPECT_TRUE(all_close(cpu(sum(gpu(longrow), {1})), sum(longrow, {1}), 1e-10, 1e-10));
  EXPECT_TRUE(all_close(cpu(argmax(gpu(longrow), 1)), argmax(longrow, 1), 0, 0));
  // NaN propagates and the first NaN wins, as on the CPU (and in NumPy and PyTorch).
  Tensor nan = from_vector(std::vector<double>{1, NAN, 3, NAN, 2, 0, 5, 4, 1}, {3, 3});
  EXPECT_TRUE(all_close(cpu(argmax(gpu(nan), 1)), argmax(nan, 1), 0, 0));
  EXPECT_TRUE(all_close(cpu(argmax(gpu(nan), 0)), argmax(nan, 0), 0, 0));
  std::vector<double> mv = cpu(max(gpu(nan), 1)).to_vector<double>();
  EXPECT_TRUE(std::isnan(mv[0]) && std::isnan(mv[1]) && mv[2] == 5);
  Tensor ints = randint({4, 9}, -100, 100);
  EXPECT_TRUE(all_close(cpu(sum(gpu(ints), {1})), sum(ints, {1}), 0, 0));
}

TEST(CudaOps, GradientsOnTheGpuMatchTheCpu) {
  EMBER_SKIP_WITHOUT_GPU();
  auto f = [](const std::vector<Tensor>& v) {
    Tensor h = tanh(matmul(v[0], v[1]) + v[2]);
    return sum(gelu(h, true) * sigmoid(h)) + mean(max(h, 1)) + sum(sum(h * h, {0}) / 3.0);
  };
  std::vector<Tensor> xs = {random({5, 7}, 51), random({7, 4}, 52), random({4}, 53)};
  std::vector<Tensor> xg;
  for (auto& x : xs) xg.push_back(gpu(x));
  for (int i = 0; i < 3; ++i) {
    Tensor gc = grad(f, i)(xs), gg = grad(f, i)(xg);
    EXPECT_EQ(gg.device(), Device::CUDA);
    EXPECT_TRUE(all_close(cpu(gg), gc, 1e-12, 1e-10)) << "input " << i;
  }
}

TEST(CudaOps, FillAndConstantFactoriesStayOnTheGpu) {
  EMBER_SKIP_WITHOUT_GPU();
  for (DType dt : {DType::Float32, DType::Float64, DType::Int64}) {
    Tensor f = full({3, 5}, 7.0, dt, Device::CUDA);
    EXPECT_EQ(f.device(), Device::CUDA);
    EXPECT_TRUE(all_close(cpu(f), full({3, 5}, 7.0, dt), 0, 0));
    EXPECT_TRUE(all_close(cpu(zeros({0, 4}, dt, Device::CUDA)), zeros({0, 4}, dt), 0, 0));
  }
  Tensor x = random({4, 6}, 61), g = gpu(x);
  g.t().slice(0, 1, 6, 2).fill_(-3.0);  // through a strided view: only every other column changes
  Tensor expect = x.clone();
  expect.t().slice(0, 1, 6, 2).fill_(-3.0);
  EXPECT_TRUE(all_close(cpu(g), expect, 0, 0));
  EXPECT_TRUE(all_close(cpu(gpu(x) * 2.5 + 1.0), x * 2.5 + 1.0, 1e-15, 1e-15));  // scalars built on the GPU
}
