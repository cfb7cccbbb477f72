// The sparse study's cuSPARSE / cuBLAS module (examples/sparse/study/cusparse.h) against the CPU
// kernels. Skipped (shown as skipped) without the CUDA backend or without a usable GPU.
#include "ops/sparse/sparse_test_util.h"
#ifdef EMBER_HAS_CUDA
#include "examples/sparse/study/cusparse.h"
#endif

using namespace ember;
using namespace ember::testing;

#ifdef EMBER_HAS_CUDA
namespace scuda = ember::sparse_cuda_study;
#define EMBER_REQUIRE_GPU() \
  if (!scuda::available()) GTEST_SKIP() << "no usable GPU"
#else
#define EMBER_REQUIRE_GPU() GTEST_SKIP() << "built without the CUDA backend (EMBER_CUDA=OFF)"
#endif

namespace {
const std::pair<int64_t, int64_t> kShapes[] = {{1, 1}, {7, 33}, {33, 7}, {127, 127}, {0, 5}, {5, 0}, {1000, 900}};
}

TEST(SparseCuda, SpmvAndSpmmMatchCpu) {
  EMBER_REQUIRE_GPU();
#ifdef EMBER_HAS_CUDA
  uint64_t seed = 1;
  for (auto [m, k] : kShapes) {
    CsrTensor a = dense_to_csr(random_sparse_dense(m, k, 0.1, seed++, DType::Float32));
    Tensor x = random({k}, seed++).to(DType::Float32), b = random({k, 5}, seed++).to(DType::Float32);
    scuda::DeviceCsr da = scuda::DeviceCsr::upload(a);
    scuda::DeviceDense dx = scuda::DeviceDense::upload(x), db = scuda::DeviceDense::upload(b);
    scuda::DeviceDense dy = scuda::DeviceDense::allocate(m, 1), dc = scuda::DeviceDense::allocate(m, 5);
    for (int rep = 0; rep < 2; ++rep) {  // the second call reuses the cached descriptors and workspace
      scuda::spmv(da, dx, dy);
      scuda::spmm(da, db, dc);
      EXPECT_TRUE(all_close(dy.download().reshape({m}), spmv(a, x), 1e-4, 1e-4)) << m << "x" << k;
      EXPECT_TRUE(all_close(dc.download(), spmm(a, b), 1e-4, 1e-4)) << m << "x" << k;
    }
    EXPECT_TRUE(all_close(da.download().to_dense(), a.to_dense(), 0, 0));
  }
#endif
}

TEST(SparseCuda, SpgemmMatchesCpu) {
  EMBER_REQUIRE_GPU();
#ifdef EMBER_HAS_CUDA
  uint64_t seed = 50;
  for (auto [m, k] : kShapes) {
    CsrTensor a = dense_to_csr(random_sparse_dense(m, k, 0.1, seed++, DType::Float32));
    CsrTensor b = dense_to_csr(random_sparse_dense(k, m, 0.1, seed++, DType::Float32));
    scuda::SpgemmPhases ph;
    scuda::DeviceCsr dc = scuda::spgemm(scuda::DeviceCsr::upload(a), scuda::DeviceCsr::upload(b), &ph);
    CsrTensor c = dc.download();
    CsrTensor want = spgemm(a, b);
    EXPECT_EQ(c.nnz(), want.nnz()) << m << "x" << k;
    EXPECT_TRUE(all_close(c.to_dense(), want.to_dense(), 1e-4, 1e-4)) << m << "x" << k;
  }
#endif
}

TEST(SparseCuda, DenseCublasMatchesCpu) {
  EMBER_REQUIRE_GPU();
#ifdef EMBER_HAS_CUDA
  Tensor a = random({33, 17}, 1).to(DType::Float32), b = random({17, 9}, 2).to(DType::Float32);
  Tensor x = random({17}, 3).to(DType::Float32);
  scuda::DeviceDense da = scuda::DeviceDense::upload(a), db = scuda::DeviceDense::upload(b);
  scuda::DeviceDense dx = scuda::DeviceDense::upload(x);
  scuda::DeviceDense dc = scuda::DeviceDense::allocate(33, 9), dy = scuda::DeviceDense::allocate(33, 1);
  scuda::gemm(da, db, dc);
  scuda::gemv(da, dx, dy);
  EXPECT_TRUE(all_close(dc.download(), matmul(a, b), 1e-4, 1e-4));
  EXPECT_TRUE(all_close(dy.download().reshape({33}), matmul(a, x), 1e-4, 1e-4));
#endif
}

TEST(SparseCuda, BadInputRaises) {
  EMBER_REQUIRE_GPU();
#ifdef EMBER_HAS_CUDA
  CsrTensor a = dense_to_csr(random_sparse_dense(4, 3, 0.5, 1));  // float64: cuSPARSE path is float32
  EXPECT_EMBER_ERROR(scuda::DeviceCsr::upload(a), "expected float32 values");
  scuda::DeviceCsr da = scuda::DeviceCsr::upload(a.to(DType::Float32));
  scuda::DeviceDense x = scuda::DeviceDense::allocate(4, 1), y = scuda::DeviceDense::allocate(4, 1);
  EXPECT_EMBER_ERROR(scuda::spmv(da, x, y), "cuda::spmv");
  EXPECT_EMBER_ERROR(scuda::spgemm(da, da), "inner dimensions differ");
#endif
}
