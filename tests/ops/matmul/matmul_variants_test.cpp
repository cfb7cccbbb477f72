// Every CPU matmul variant registered when the tests run (the library's, the study's of
// examples/matmul, one a user adds here) against a float64 reference, on awkward shapes (1, 7, 33,
// 127, 1000), transposed, sliced and broadcast (stride-0) operands, batches, both dtypes. The
// packed kernel is run with every micro-kernel this CPU supports (AVX-512, AVX2, portable), not
// only the best. Registration itself: selection by name, and the errors for bad names.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <tuple>
#include <vector>

#include "cuda_test_util.h"
#include "framework/core/parallel.h"
#include "ops/matmul/cpu/kernels.h"
#include "study_kernels.h"
#include "test_util.h"

namespace ember {
namespace {

using testing::all_close;
using testing::grad_ok;
using testing::random;

// The reference: C[i,j] = sum_p A[i,p] B[p,j] in float64, and the scale S[i,j] = sum_p |A||B|
// that a rounding error of the product is proportional to (|C| can be tiny after cancellation).
struct Reference {
  std::vector<double> c, scale;
};
Reference reference(const Tensor& a, const Tensor& b) {
  int64_t m = a.size(0), k = a.size(1), n = b.size(1);
  std::vector<double> x = a.to_vector<double>(), y = b.to_vector<double>();
  Reference r{std::vector<double>(size_t(m * n)), std::vector<double>(size_t(m * n))};
  for (int64_t i = 0; i < m; ++i)
    for (int64_t p = 0; p < k; ++p)
      for (int64_t j = 0; j < n; ++j) {
        double u = x[size_t(i * k + p)], v = y[size_t(p * n + j)];
        r.c[size_t(i * n + j)] += u * v;
        r.scale[size_t(i * n + j)] += std::abs(u * v);
      }
  return r;
}

// |c - ref| <= atol + rtol * scale: a fixed part plus a part relative to the size of the terms.
::testing::AssertionResult close_to(const Tensor& c, const Reference& r, DType dt) {
  double atol = dt == DType::Float32 ? 1e-5 : 1e-12, rtol = dt == DType::Float32 ? 2e-5 : 1e-13;
  std::vector<double> got = c.to_vector<double>();
  if (got.size() != r.c.size()) return ::testing::AssertionFailure() << "size " << got.size() << " vs " << r.c.size();
  for (size_t i = 0; i < got.size(); ++i)
    if (!(std::abs(got[i] - r.c[i]) <= atol + rtol * r.scale[i]))
      return ::testing::AssertionFailure() << "element " << i << ": " << got[i] << " vs reference " << r.c[i];
  return ::testing::AssertionSuccess();
}

// Runs one 2-D product through a raw kernel on the operands' own strides (no copy).
template <class Kernel>
Tensor run_kernel(const Tensor& a, const Tensor& b, Kernel kernel) {
  Tensor c = full({a.size(0), b.size(1)}, 12345.0, a.dtype());  // garbage the kernel must overwrite
  GemmArgs g{a.size(0), b.size(1), a.size(1), a.raw_data(), a.strides()[0], a.strides()[1],
             b.raw_data(), b.strides()[0], b.strides()[1], c.raw_data(), c.strides()[0], a.dtype()};
  kernel(g);
  return c;
}

// The blocked kernel with block sizes that divide nothing, so that every loop has a ragged edge.
const char* const kOddBlocked = "blocked_5x7x3";

// "" (the library's choice per shape) and every CPU variant registered, the study's included.
std::vector<MatmulOptions> all_variants() {
  static const bool registered = [] {
    testing::register_study_kernels();
    matmul_study::register_blocked_matmul(kOddBlocked, {5, 7, 3});
    return true;
  }();
  (void)registered;
  std::vector<MatmulOptions> v(1);
  for (const std::string& name : matmul_variants(Device::CPU)) {
    if (name == "blas" && !cpu::blas_available()) continue;  // registered, refusing without OpenBLAS
    MatmulOptions o;
    o.impl = name;
    v.push_back(o);
  }
  return v;
}

std::string label(const MatmulOptions& o) { return o.impl.empty() ? "auto" : o.impl; }

// (m, k, n): ones, primes, sizes that straddle the register tiles (MR = 4 or 6, NR = 4..64) and
// the cache blocks (kc = 256 or 512, mc = 64..288), and 1000.
const std::vector<std::tuple<int64_t, int64_t, int64_t>> kShapes = {
    {1, 1, 1}, {1, 7, 1}, {7, 1, 33}, {1, 33, 127}, {33, 127, 7}, {127, 33, 1}, {13, 300, 37},
    {1000, 7, 33}, {7, 1000, 33}, {33, 7, 1000}, {300, 257, 65}, {127, 127, 127},
    {200, 301, 257}};  // the last: threaded, all rows in one block of A (packed's small-m path)

class MatmulVariants : public ::testing::TestWithParam<DType> {};

TEST_P(MatmulVariants, ContiguousShapes) {
  DType dt = GetParam();
  for (auto [m, k, n] : kShapes) {
    Tensor a = random({m, k}, uint64_t(m * 7 + k)).to(dt), b = random({k, n}, uint64_t(n * 11 + k)).to(dt);
    Reference ref = reference(a, b);
    for (const MatmulOptions& o : all_variants())
      EXPECT_TRUE(close_to(matmul(a, b, o), ref, dt)) << label(o) << " " << m << "x" << k << " @ " << k << "x" << n;
  }
}

TEST_P(MatmulVariants, TransposedAndStridedOperands) {
  DType dt = GetParam();
  for (auto [m, k, n] : std::vector<std::tuple<int64_t, int64_t, int64_t>>{{7, 33, 127}, {127, 300, 33}, {1, 33, 7}, {33, 1, 7}, {200, 301, 257}}) {
    Tensor at = random({k, m}, 1).to(dt).t();                          // column-major A
    Tensor bt = random({n, k}, 2).to(dt).t();                          // column-major B
    Tensor as = random({m, 2 * k + 1}, 3).to(dt).slice(1, 1, 2 * k + 1, 2);  // every other column
    Tensor bs = random({2 * k, n + 3}, 4).to(dt).slice(0, 0, 2 * k, 2).slice(1, 2, n + 2);  // rows step 2, offset
    Tensor bb = random({1, n}, 5).to(dt).expand({k, n});                // stride 0 rows
    if (m > 1 && k > 1) ASSERT_FALSE(at.is_contiguous());  // views of one row or column are contiguous
    ASSERT_FALSE(as.is_contiguous());
    if (k > 1) ASSERT_FALSE(bs.is_contiguous());
    for (auto [a, b] : std::vector<std::pair<Tensor, Tensor>>{{at, bt}, {as, bs}, {at, bs}, {as, bt}, {at, bb}}) {
      Reference ref = reference(a, b);
      for (const MatmulOptions& o : all_variants())
        EXPECT_TRUE(close_to(matmul(a, b, o), ref, dt))
            << label(o) << " " << m << "x" << k << "x" << n << " strides " << to_string(a.strides()) << " @ "
            << to_string(b.strides());
    }
  }
}

TEST_P(MatmulVariants, BatchedAndBroadcast) {
  DType dt = GetParam();
  Tensor a = random({2, 1, 7, 33}, 6).to(dt), b = random({3, 33, 13}, 7).to(dt);
  Tensor bt = random({3, 13, 33}, 8).to(dt).transpose(-2, -1);
  for (const MatmulOptions& o : all_variants())
    for (const Tensor& rhs : {b, bt}) {
      Tensor c = matmul(a, rhs, o);
      ASSERT_EQ(c.shape(), (Shape{2, 3, 7, 13})) << label(o);
      for (int64_t i = 0; i < 2; ++i)
        for (int64_t j = 0; j < 3; ++j) {
          Tensor ai = a.slice(0, i, i + 1).reshape({7, 33}), bj = rhs.slice(0, j, j + 1).reshape({33, 13});
          Tensor cij = c.slice(0, i, i + 1).slice(1, j, j + 1).reshape({7, 13});
          EXPECT_TRUE(close_to(cij, reference(ai, bj), dt)) << label(o) << " batch " << i << "," << j;
        }
    }
}

// Each micro-kernel the CPU supports, called directly on strided operands, including products
// larger than one cache block in every dimension (k > kc, m > mc, n > nc for float64).
TEST_P(MatmulVariants, PackedEveryInstructionSet) {
  DType dt = GetParam();
  std::vector<std::tuple<int64_t, int64_t, int64_t>> shapes = kShapes;
  shapes.push_back({3, 5, 4100});
  shapes.push_back({2, 300, 37});     // two rows: the AVX2 dot kernel where the ISA has it
  shapes.push_back({290, 520, 40});   // threads split the rows of C
  shapes.push_back({64, 300, 500});   // threads split the columns of C
  for (int isa = 0; isa <= int(cpu::best_cpu_isa()); ++isa)
    for (auto [m, k, n] : shapes) {
      Tensor a = random({m, k}, 9).to(dt), b = random({n, k}, 10).to(dt).t();
      Tensor c = run_kernel(a, b, [&](const GemmArgs& g) { cpu::gemm_packed(g, cpu::CpuIsa(isa)); });
      EXPECT_TRUE(close_to(c, reference(a, b), dt)) << name(cpu::CpuIsa(isa)) << " " << m << "x" << k << "x" << n;
    }
}

// gemm_packed on every instruction set the CPU has, on one thread and on all, against the float64
// reference; `what` names the case in a failure.
void expect_packed_matches_on_every_isa(const Tensor& a, const Tensor& b, DType dt, const std::string& what) {
  const Reference ref = reference(a, b);
  const int threads = num_threads();
  for (int t : {1, threads}) {
    set_num_threads(t);
    for (int isa = 0; isa <= int(cpu::best_cpu_isa()); ++isa) {
      Tensor c = run_kernel(a, b, [&](const GemmArgs& g) { cpu::gemm_packed(g, cpu::CpuIsa(isa)); });
      EXPECT_TRUE(close_to(c, ref, dt)) << name(cpu::CpuIsa(isa)) << " threads " << t << " " << what;
    }
  }
  set_num_threads(threads);
}

// Products whose rows fit one block of A with a row-major B, which the packed kernel reads in place
// (the unpacked-B path, ops/matmul/cpu/few_rows.cpp): rows that leave a ragged row panel, k over
// several kc blocks (accumulating into C), a last sliver narrower than NR, row strides wider than
// the row, row strides of 4 KiB multiples (which shorten kc), 250 rows (more than AVX-512's mc,
// within kUnpackedRows), and last panels of 1 to 5 rows (each first-rows kernel), on one thread and on all.
// On AVX-512 these take the stripes: last stripes of 4 to 34 columns (copied, or read
// in place at 16 and 32), last row panels of 1 to 5 rows, rows of B on cache lines or not, and a
// C larger than any L2 (3.2 MB), whose lines each panel fetches first, and a B of 1.6 MB with rows
// 4 KiB apart, below the 2 MiB from which Ember asks for huge pages, in shorter kc blocks (three
// of 134 rows on a 2 MiB, 16-way L2, where a B on huge pages takes two of 200: stripe_kc). Rows
// 32 KiB apart: 20 rows in seven blocks of 43, and 100 rows on the copying path instead. Products
// of one to three rows take the stripes as well (a single panel of the last-rows kernel), over
// several kc blocks and with a last stripe copied.
TEST_P(MatmulVariants, PackedReadsRowMajorBInPlace) {
  DType dt = GetParam();
  struct Case {
    int64_t m, k, n, row_stride;  // B is the first n columns of a k x row_stride matrix
  };
  const std::vector<Case> cases = {{4, 9, 5, 5},         {64, 768, 130, 130}, {40, 1100, 200, 1024},
                                   {190, 600, 70, 70},   {37, 1030, 70, 3072}, {96, 520, 300, 303},
                                   {250, 300, 140, 140}, {5, 70, 128, 128},  {8, 300, 130, 131},
                                   {9, 520, 64, 64},     {64, 768, 130, 144}, {21, 400, 100, 112},
                                   {40, 70, 20000, 20000}, {40, 400, 130, 1024}, {20, 300, 130, 8192},
                                   {100, 300, 130, 8192}, {1, 300, 100, 100},   {2, 700, 130, 130},
                                   {3, 900, 96, 3072},    {2, 5, 20, 20}};
  for (const Case& cs : cases) {
    Tensor a = random({cs.m, cs.k}, 11).to(dt);
    Tensor b = random({cs.k, cs.row_stride}, 12).to(dt).slice(1, 0, cs.n);
    ASSERT_EQ(b.strides()[0], cs.row_stride);
    expect_packed_matches_on_every_isa(a, b, dt, str(cs.m, "x", cs.k, "x", cs.n, " row stride ", cs.row_stride));
  }
}

// The same products with B treated as too large for the L3 (the threshold lowered to one byte), so
// that it is packed a group of slivers at a time: groups cut short by the end of B or of a thread's
// share, the last sliver narrower than NR inside a group, and several kc blocks. (AVX-512 runs
// float32 products with a row-major A in stripes instead, whatever B's size, so each case runs
// again with A a transposed view.)
TEST_P(MatmulVariants, PackedPacksAStreamedRowMajorBInGroups) {
  DType dt = GetParam();
  struct Case {
    int64_t m, k, n, row_stride;
  };
  const std::vector<Case> cases = {{64, 768, 130, 130},  {40, 1100, 600, 1024}, {37, 530, 1000, 1003},
                                   {250, 300, 140, 140}, {6, 70, 300, 300},    {9, 520, 64, 64},
                                   {128, 768, 130, 130}, {100, 530, 1000, 1003}, {200, 1100, 600, 1024}};
  struct Restore {
    ~Restore() { cpu::set_streamed_b_bytes(0); }
  } restore;
  cpu::set_streamed_b_bytes(1);
  for (const Case& cs : cases) {
    Tensor a = random({cs.m, cs.k}, 15).to(dt);
    Tensor b = random({cs.k, cs.row_stride}, 16).to(dt).slice(1, 0, cs.n);
    expect_packed_matches_on_every_isa(a, b, dt, str("streamed ", cs.m, "x", cs.k, "x", cs.n, " row stride ", cs.row_stride));
    // A transposed view keeps even AVX-512's float32 products on the grouped pack.
    Tensor at = random({cs.k, cs.m}, 17).to(dt).t();
    expect_packed_matches_on_every_isa(at, b, dt, str("streamed, A transposed, ", cs.m, "x", cs.k, "x", cs.n));
  }
}

// Products with more rows than the few-rows path, whose row-major A the general path reads where
// it lies (float32 on AVX2 and AVX-512; the others pack it): last row panels of 1 to 5 rows (each
// shorter kernel), a last sliver narrower than NR (through the edge buffer), k over several kc
// blocks, more rows than one block of A (mc = 192-768), and rows wider than k (a slice of a wider
// matrix); a row stride of 8 KiB, read in place in blocks of fewer rows, and one of 32 KiB, which
// the rule sends back to the packed copy. On two threads these split the columns, taken in groups
// in turn: 340 columns leave a last group of one narrow sliver on AVX-512 (groups of two) and
// 4200 a second block of columns (nc = 4096), whose groups are counted after the first block's.
TEST_P(MatmulVariants, PackedReadsRowMajorAInPlace) {
  DType dt = GetParam();
  struct Case {
    int64_t m, k, n, row_stride;  // A is the first k columns of an m x row_stride matrix
  };
  const std::vector<Case> cases = {{400, 600, 200, 600}, {301, 1100, 130, 1103}, {800, 70, 64, 70},
                                   {299, 40, 300, 45},   {303, 520, 64, 520},   {305, 33, 65, 40},
                                   {389, 40, 70, 8192}, {400, 600, 200, 2048}, {300, 1100, 340, 1100},
                                   {300, 70, 4200, 70}};
  for (const Case& cs : cases) {
    Tensor a = random({cs.m, cs.row_stride}, 17).to(dt).slice(1, 0, cs.k);
    Tensor b = random({cs.k, cs.n}, 18).to(dt);
    ASSERT_EQ(a.strides()[0], cs.row_stride);
    expect_packed_matches_on_every_isa(a, b, dt, str(cs.m, "x", cs.k, "x", cs.n, " A row stride ", cs.row_stride));
  }
}

// The same path with B a transposed view (the tied LM head, wte^T): each sliver is packed alone
// just before its use, k in blocks of at most 1024 (fewer for many rows). Ragged row panels, k over
// several such blocks (2100: three of 700; 1100 for 250 rows: three of 367), a narrow last sliver,
// and B's columns lying wider apart than k (a slice of a wider matrix), on one thread and on all.
TEST_P(MatmulVariants, PackedPacksATransposedBSliverBySliver) {
  DType dt = GetParam();
  struct Case {
    int64_t m, k, n, col_stride;  // B = W^T for W the first k columns of an n x col_stride matrix
  };
  const std::vector<Case> cases = {{4, 9, 5, 9},         {64, 768, 130, 770}, {37, 520, 70, 520},
                                   {190, 300, 257, 301}, {21, 2100, 75, 2101}, {250, 1100, 70, 1100},
                                   {11, 100, 128, 100}};
  for (const Case& cs : cases) {
    Tensor a = random({cs.m, cs.k}, 13).to(dt);
    Tensor b = random({cs.n, cs.col_stride}, 14).to(dt).slice(1, 0, cs.k).t();
    ASSERT_EQ(b.strides()[0], 1);
    ASSERT_EQ(b.strides()[1], cs.col_stride);
    expect_packed_matches_on_every_isa(a, b, dt, str(cs.m, "x", cs.k, "x", cs.n, " column stride ", cs.col_stride));
  }
}

INSTANTIATE_TEST_SUITE_P(Dtypes, MatmulVariants, ::testing::Values(DType::Float32, DType::Float64),
                         [](const ::testing::TestParamInfo<DType>& i) { return std::string(name(i.param)); });

TEST(MatmulVariantsCoverage, TheStudyKernelsAreAmongThoseTested) {
  std::vector<std::string> tested;
  for (const MatmulOptions& o : all_variants()) tested.push_back(label(o));
  for (const char* v : {"auto", "packed", "naive", "ikj", "blocked", kOddBlocked})
    EXPECT_NE(std::find(tested.begin(), tested.end(), v), tested.end()) << v;
}

TEST(MatmulVariantsErrors, BadBlockSizesAndUnavailableVariants) {
  Tensor a = random({4, 5}, 1), b = random({5, 6}, 2);
  EXPECT_EMBER_ERROR(matmul_study::register_blocked_matmul("blocked_bad", {64, 256, 0}), "block_k=0");
  MatmulOptions o;
  o.impl = "tiled";  // a CUDA variant (the CUDA study's) on CPU tensors
  EXPECT_EMBER_ERROR(matmul(a, b, o), "variant 'tiled' is not available on cpu (registered: auto, packed, blas");
  EXPECT_EMBER_ERROR(matmul(a, b, o), "register_matmul_study_kernels()");
  EXPECT_EMBER_ERROR(parse_matmul_impl("blocked_bad"), "variant 'blocked_bad' is not available on cpu");
  EXPECT_EMBER_ERROR(matmul_cpu_kernel("tiled"), "variant 'tiled' is not available on cpu");
  if (!cpu::blas_available()) {
    o.impl = "blas";
    EXPECT_EMBER_ERROR(matmul(a, b, o), "impl 'blas' needs OpenBLAS");
  }
  EXPECT_EQ(parse_matmul_impl("packed"), "packed");
  EXPECT_EQ(parse_matmul_impl("auto"), "auto");
  EXPECT_EQ(parse_matmul_impl("cublas", Device::CUDA), "cublas");
  EXPECT_EMBER_ERROR(parse_matmul_impl("packed", Device::CUDA), "variant 'packed' is not available on cuda");
}

TEST(MatmulVariantsErrors, EmptyInnerDimensionGivesZeros) {
  for (const MatmulOptions& o : all_variants()) {
    Tensor c = matmul(zeros({3, 0}), zeros({0, 4}), o);
    EXPECT_EQ(c.shape(), (Shape{3, 4}));
    for (float v : c.to_vector<float>()) EXPECT_EQ(v, 0.f) << label(o);
  }
  // and straight through the packed kernel, which must clear C itself
  Tensor a = zeros({3, 0}), b = zeros({0, 4});
  Tensor d = run_kernel(a, b, [](const GemmArgs& g) { cpu::gemm_packed(g); });
  for (float v : d.to_vector<float>()) EXPECT_EQ(v, 0.f);
}

// A kernel of the user's own, from outside the library: the outer-product (p-i-j) loop order,
// counting its calls so that the test sees it ran, and not the library's kernel.
std::atomic<int> g_outer_calls{0};
template <class T>
void outer_product_gemm(const GemmArgs& g) {
  const T* a = static_cast<const T*>(g.a);
  const T* b = static_cast<const T*>(g.b);
  T* c = static_cast<T*>(g.c);
  for (int64_t i = 0; i < g.m; ++i)
    for (int64_t j = 0; j < g.n; ++j) c[i * g.c_rs + j] = 0;
  for (int64_t p = 0; p < g.k; ++p)
    for (int64_t i = 0; i < g.m; ++i)
      for (int64_t j = 0; j < g.n; ++j) c[i * g.c_rs + j] += a[i * g.a_rs + p * g.a_cs] * b[p * g.b_rs + j * g.b_cs];
}
void register_outer_product() {
  static const bool done = [] {
    register_matmul_variant("user_outer", [](const GemmArgs& g) {
      ++g_outer_calls;
      g.dtype == DType::Float32 ? outer_product_gemm<float>(g) : outer_product_gemm<double>(g);
    });
    return true;
  }();
  (void)done;
}

TEST(MatmulRegisterVariant, AUserKernelIsSelectedByNameAndDifferentiated) {
  register_outer_product();
  std::vector<std::string> cpu = matmul_variants(Device::CPU);
  EXPECT_NE(std::find(cpu.begin(), cpu.end(), "user_outer"), cpu.end());
  MatmulOptions o;
  o.impl = "user_outer";
  for (DType dt : {DType::Float64, DType::Float32})
    for (auto [m, k, n] : kShapes) {
      Tensor a = random({m, k}, uint64_t(m + 3 * k)).to(dt), b = random({n, k}, uint64_t(n + 5 * k)).to(dt).t();
      int before = g_outer_calls;
      Tensor c = matmul(a, b, o);
      EXPECT_EQ(g_outer_calls - before, 1) << m << "x" << k << "x" << n;
      EXPECT_TRUE(close_to(c, reference(a, b), dt)) << m << "x" << k << "x" << n;
    }
  // A batch runs the kernel once per product; a ScopedVariant selects it too.
  Tensor a = random({3, 7, 33}, 20), b = random({33, 13}, 21);
  int before = g_outer_calls;
  Tensor c = matmul(a, b, o);
  EXPECT_EQ(g_outer_calls - before, 3);
  EXPECT_TRUE(all_close(c, matmul(a, b), 1e-12, 1e-12));
  before = g_outer_calls;
  {
    ScopedVariant use("matmul", "user_outer");
    EXPECT_TRUE(all_close(matmul(a, b), c, 1e-12, 1e-12));
  }
  EXPECT_EQ(g_outer_calls - before, 3);
  // The backward runs the chosen variant as well, and its gradients are right.
  before = g_outer_calls;
  EXPECT_TRUE(grad_ok([&](const std::vector<Tensor>& x) { return matmul(x[0], x[1], o); },
                      {random({2, 4, 3}, 22), random({3, 5}, 23)}));
  EXPECT_GT(g_outer_calls - before, 0);
}

TEST(MatmulRegisterVariant, BadRegistrationsAreRefused) {
  register_outer_product();
  auto copy = [](const GemmArgs& g) { outer_product_gemm<double>(g); };
  EXPECT_EMBER_ERROR(register_matmul_variant("user_outer", copy), "matmul already has a CPU variant 'user_outer'");
  EXPECT_EMBER_ERROR(register_matmul_variant("packed", copy), "matmul already has a CPU variant 'packed'");
  EXPECT_EMBER_ERROR(register_matmul_variant("", copy), "reserved for the library's own kernel");
  EXPECT_EMBER_ERROR(register_matmul_variant("auto", copy), "reserved for the library's own kernel");
  EXPECT_EMBER_ERROR(register_matmul_variant("user_empty", Matmul2dKernel()), "the kernel of 'user_empty' is empty");
  std::vector<std::string> cpu = matmul_variants(Device::CPU);
  EXPECT_EQ(std::count(cpu.begin(), cpu.end(), "user_outer"), 1);
  EXPECT_EQ(std::count(cpu.begin(), cpu.end(), "user_empty"), 0);
  // The study's registration runs once, however often it is called.
  testing::register_study_kernels();
  testing::register_study_kernels();
  cpu = matmul_variants(Device::CPU);
  EXPECT_EQ(std::count(cpu.begin(), cpu.end(), "naive"), 1);
}

// A CUDA variant joins the same way, and registering one needs no GPU. In a CUDA build its kernel
// forwards to the CUDA study's naive kernel (so that every test that runs all CUDA variants on a
// GPU gets a right answer from it too); in a CPU-only build nothing can run it.
std::atomic<int> g_cuda_calls{0};
void register_user_cuda_variant() {
  static const bool done = [] {
    register_matmul_cuda_variant(
        "user_cuda", {[](const cuda::GemmView<float>& g, int64_t batch, const MatmulOptions&) {
                        ++g_cuda_calls;
#ifdef EMBER_HAS_CUDA
                        matmul_cuda_study::launch_naive(g, batch);
#else
                        (void)g, (void)batch;
#endif
                      },
                      nullptr});
    return true;
  }();
  (void)done;
}

TEST(MatmulRegisterCudaVariant, IsListedSelectableAndRefusedOnTheCpu) {
  register_user_cuda_variant();
  std::vector<std::string> names = matmul_variants(Device::CUDA);
  EXPECT_EQ(std::count(names.begin(), names.end(), "user_cuda"), 1);
  EXPECT_EQ(std::count(names.begin(), names.end(), "cublas"), 1);  // the library's, always named
  EXPECT_EQ(parse_matmul_impl("user_cuda", Device::CUDA), "user_cuda");
  CudaMatmulKernels k = matmul_cuda_kernels("user_cuda");
  EXPECT_TRUE(bool(k.f32));
  EXPECT_FALSE(bool(k.f64));
  // A CUDA variant is not a CPU one: CPU tensors refuse it by name.
  MatmulOptions o;
  o.impl = "user_cuda";
  EXPECT_EMBER_ERROR(matmul(random({3, 4}, 1), random({4, 2}, 2), o), "variant 'user_cuda' is not available on cpu");
  EXPECT_EMBER_ERROR(matmul_cuda_kernels("cublas"), "cuBLAS");
  EXPECT_EMBER_ERROR(matmul_cuda_kernels("nope"), "variant 'nope' is not available on cuda");
  EXPECT_EMBER_ERROR(matmul_cuda_kernels("nope"), "register_matmul_cuda_study_kernels");
}

TEST(MatmulRegisterCudaVariant, BadRegistrationsAreRefused) {
  register_user_cuda_variant();
  CudaMatmulKernels some{[](const cuda::GemmView<float>&, int64_t, const MatmulOptions&) {}, nullptr};
  EXPECT_EMBER_ERROR(register_matmul_cuda_variant("user_cuda", some), "matmul already has a CUDA variant 'user_cuda'");
  EXPECT_EMBER_ERROR(register_matmul_cuda_variant("cublas", some), "matmul already has a CUDA variant 'cublas'");
  EXPECT_EMBER_ERROR(register_matmul_cuda_variant("auto", some), "reserved for the library's own kernel");
  EXPECT_EMBER_ERROR(register_matmul_cuda_variant("user_none", {}), "neither a float32 nor a float64 kernel");
  // A CPU variant's name is free on CUDA (the studies use "naive" on both).
  std::vector<std::string> names = matmul_variants(Device::CUDA);
  EXPECT_EQ(std::count(names.begin(), names.end(), "user_none"), 0);
  EXPECT_EQ(std::count(names.begin(), names.end(), "packed"), 0);
}

TEST(MatmulRegisterCudaVariant, RunsOnCudaTensorsWithBatchesAndGradients) {
  EMBER_SKIP_WITHOUT_GPU();
  register_user_cuda_variant();
  MatmulOptions o;
  o.impl = "user_cuda";
  Tensor a = random({3, 7, 33}, 30).to(DType::Float32), b = random({33, 13}, 31).to(DType::Float32);
  int before = g_cuda_calls;
  Tensor c = matmul(a.to(Device::CUDA), b.to(Device::CUDA), o).to(Device::CPU);
  EXPECT_GE(g_cuda_calls - before, 1);
  EXPECT_TRUE(all_close(c, matmul(a, b), 1e-4, 1e-4));
  EXPECT_EMBER_ERROR(matmul(a.to(DType::Float64).to(Device::CUDA), b.to(DType::Float64).to(Device::CUDA), o),
                     "float32");
}

}  // namespace
}  // namespace ember
