// The CUDA matmul variants on a GPU: the real kernels on the same awkward problems the CPU block
// emulator runs (cuda_emulator_test.cpp), and matmul() on CUDA tensors (views, batches, errors).
// Skipped without a GPU.
#include "test_util.h"
#include "cuda_test_util.h"
#include "study_kernels.h"
#include "tests/ops/matmul/gemm_cases.h"
#ifdef EMBER_HAS_CUDA
#include "ops/matmul/cuda/gemm.h"
#endif

using namespace ember;
using namespace ember::testing;

#ifdef EMBER_HAS_CUDA
namespace {

template <class T>
Tensor to_gpu(const std::vector<T>& v) {
  return from_vector(v).to(Device::CUDA);
}

// Runs one variant on the GPU over a case's operands and checks the result like the emulator.
template <class T, class Launch>
::testing::AssertionResult run_kernel_on_gpu(const GemmCase& c, Launch launch, double eps = 0) {
  HostGemm<T> h(c);
  Tensor a = to_gpu(h.a), b = to_gpu(h.b), out = to_gpu(h.c);
  cuda::GemmView<T> g = h.view;
  g.a = a.template data<T>(), g.b = b.template data<T>(), g.c = out.template data<T>();
  launch(g);
  return h.check(out.to(Device::CPU).template to_vector<T>(), eps);
}

// A variant by name, as matmul's dispatcher runs it (the study's are registered first).
template <class T>
::testing::AssertionResult run_on_gpu(const GemmCase& c, const std::string& impl, int tile, double eps = 0) {
  register_study_kernels();
  return run_kernel_on_gpu<T>(c, [&](const cuda::GemmView<T>& g) { cuda::gemm(g, c.batch, impl, tile); }, eps);
}

}  // namespace

TEST(CudaMatmul, StudyKernelsMatchFloat64Reference) {
  EMBER_SKIP_WITHOUT_GPU();
  for (const GemmCase& c : awkward_gemm_cases()) {
    EXPECT_TRUE(run_on_gpu<float>(c, "naive", 0));
    EXPECT_TRUE(run_on_gpu<double>(c, "naive", 0));
    for (int tile : {4, 8, 16, 32}) {
      EXPECT_TRUE(run_on_gpu<float>(c, "tiled", tile)) << "TILE " << tile;
      EXPECT_TRUE(run_on_gpu<double>(c, "tiled", tile)) << "TILE " << tile;
    }
    EXPECT_TRUE(run_on_gpu<float>(c, "register_tiled", 0));
    EXPECT_TRUE(run_on_gpu<float>(c, "register_tiled_db", 0));
  }
}

TEST(CudaMatmul, CublasVariantsMatchFloat64Reference) {
  EMBER_SKIP_WITHOUT_GPU();
  for (const GemmCase& c : awkward_gemm_cases()) {
    EXPECT_TRUE(run_on_gpu<float>(c, "cublas", 0));
    EXPECT_TRUE(run_on_gpu<double>(c, "cublas", 0));
    EXPECT_TRUE(run_on_gpu<float>(c, "cublas_tf32", 0, /*TF32 rounding*/ 1.0 / 1024));
  }
}

TEST(CudaMatmul, OpMatchesCpuForEveryVariantAndLayout) {
  EMBER_SKIP_WITHOUT_GPU();
  struct Pair {
    Tensor a, b;
  };
  std::vector<Pair> pairs = {
      {random({33, 17}, 1), random({17, 65}, 2)},
      {random({17, 33}, 3).t(), random({65, 17}, 4).t()},           // both transposed views
      {random({3, 1, 7, 9}, 5), random({4, 9, 5}, 6)},              // broadcast batch dims
      {random({2, 5, 8}, 7).slice(2, 1, 8, 2), random({4, 6}, 8)},  // strided columns
      {random({127}, 9), random({127, 3}, 10)},                     // 1-d operand
      {random({3, 4, 5, 6}, 11).permute({1, 0, 2, 3}), random({4, 3, 6, 2}, 12)},  // batch offsets not one progression
  };
  register_study_kernels();
  // Every CUDA variant registered (the library's cuBLAS and the study's), and tiled at both ends.
  std::vector<std::pair<std::string, int>> variants = {{"auto", 16}, {"tiled", 4}, {"tiled", 32}};
  for (const std::string& v : matmul_variants(Device::CUDA)) variants.push_back({v, 16});
  for (const Pair& p : pairs) {
    Tensor ref = matmul(p.a, p.b);  // float64 on the CPU
    for (auto [impl, tile] : variants) {
      MatmulOptions o;
      o.impl = impl, o.tile = tile;
      double tol = impl == "cublas_tf32" ? 2e-2 : 1e-4;
      Tensor a32 = p.a.to(DType::Float32).to(Device::CUDA), b32 = p.b.to(DType::Float32).to(Device::CUDA);
      EXPECT_TRUE(all_close(matmul(a32, b32, o).to(Device::CPU), ref, tol, tol)) << impl << " tile " << tile;
      bool f64 = impl == "auto" || impl == "cublas" || bool(matmul_cuda_kernels(impl).f64);
      if (!f64) continue;
      Tensor got = matmul(p.a.to(Device::CUDA), p.b.to(Device::CUDA), o).to(Device::CPU);
      EXPECT_TRUE(all_close(got, ref, 1e-12, 1e-12)) << impl << " float64";
    }
  }
}

// bfloat16 / float16 operands run on cuBLAS's tensor-core GEMM with float32 accumulation; the
// reference is the float64 product of the same rounded operands, and the result is rounded once.
TEST(CudaMatmul, HalfOperandsMatchTheFloat64ProductOfTheRoundedValues) {
  EMBER_SKIP_WITHOUT_GPU();
  struct Pair {
    Tensor a, b;
  };
  std::vector<Pair> pairs = {
      {random({33, 17}, 1), random({17, 65}, 2)},
      {random({3, 1, 7, 9}, 5), random({4, 9, 5}, 6)},  // broadcast batch dims
      {random({127}, 9), random({127, 3}, 10)},         // 1-d operand
      {random({2, 64, 129}, 13), random({129, 40}, 14)},
  };
  for (DType dt : {DType::BFloat16, DType::Float16})
    for (const Pair& p : pairs) {
      Tensor a = p.a.to(dt), b = p.b.to(dt);
      Tensor ref = matmul(a.to(DType::Float64), b.to(DType::Float64));
      Tensor got = matmul(a.to(Device::CUDA), b.to(Device::CUDA));
      EXPECT_EQ(got.dtype(), dt);
      // One rounding of the result (2^-8 for bfloat16, 2^-11 for float16) over float32 sums.
      const double tol = dt == DType::BFloat16 ? 8e-3 : 1e-3;
      EXPECT_TRUE(all_close(got.to(Device::CPU).to(DType::Float64), ref, tol, tol)) << dt << " " << to_string(a.shape());
      // The transposed views that linear's backward passes (dY^T x) read in place.
      if (a.dim() < 2) continue;
      Tensor gt = matmul(b.to(Device::CUDA).transpose(-1, -2), a.to(Device::CUDA).transpose(-1, -2));
      EXPECT_TRUE(all_close(gt.to(Device::CPU).to(DType::Float64), ref.transpose(-1, -2), tol, tol)) << dt << " transposed";
    }
  MatmulOptions o;
  o.impl = "tiled";
  Tensor h = random({4, 4}, 1).to(DType::BFloat16).to(Device::CUDA);
  EXPECT_EMBER_ERROR(matmul(h, h, o), "run on cuBLAS only");
}

TEST(CudaMatmul, BadVariantsRaiseClearErrors) {
  EMBER_SKIP_WITHOUT_GPU();
  register_study_kernels();
  Tensor a = random({4, 4}, 1).to(Device::CUDA);
  MatmulOptions o;
  o.impl = "packed";  // a CPU variant on CUDA tensors
  EXPECT_EMBER_ERROR(matmul(a, a, o),
                     "variant 'packed' is not available on cuda (registered: auto, cublas, cublas_tf32, naive, tiled");
  o.impl = "tiled", o.tile = 5;
  EXPECT_EMBER_ERROR(matmul(a, a, o), "tile must be 4, 8, 16 or 32");
  o.impl = "register_tiled";
  EXPECT_EMBER_ERROR(matmul(a, a, o), "float32 only");
  o.impl = "cublas_tf32";
  EXPECT_EMBER_ERROR(matmul(a, a, o), "float32");
  EXPECT_EMBER_ERROR(matmul(a, random({4, 4}, 2)), "device mismatch");
}

#else
TEST(CudaMatmul, NeedsACudaBuild) { GTEST_SKIP() << "Ember was built without CUDA"; }
#endif
