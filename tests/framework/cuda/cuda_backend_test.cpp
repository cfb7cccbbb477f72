// The CUDA backend: detection, the clear error without a GPU, status checks, and (on a GPU) the
// caching allocator, copies, events, streams and cuRAND.
#include <cmath>

#include "test_util.h"
#include "cuda_test_util.h"
#include "framework/core/cuda.h"
#ifdef EMBER_HAS_CUDA
#include "framework/cuda/check.h"
#endif

using namespace ember;
using namespace ember::testing;

TEST(CudaBackend, DetectionAnswersWithoutThrowing) {
  bool a = cuda_available();
  EXPECT_EQ(a, cuda_available());  // decided once
  if (!a) EXPECT_FALSE(cuda::unavailable_reason().empty());
  else EXPECT_TRUE(cuda::unavailable_reason().empty());
#ifndef EMBER_HAS_CUDA
  EXPECT_FALSE(a);
  EXPECT_FALSE(cuda::built_with_cuda());
#endif
}

TEST(CudaBackend, WithoutAGpuCudaTensorsRaiseAClearError) {
  if (cuda_available()) GTEST_SKIP() << "this machine has a GPU";
  Tensor x = from_vector(std::vector<float>{1, 2, 3});
  EXPECT_EMBER_ERROR(x.to(Device::CUDA), "not available");
  EXPECT_EMBER_ERROR(empty({2, 2}, DType::Float32, Device::CUDA), "not available");
  EXPECT_EMBER_ERROR(cuda::rand({4}, DType::Float32, 1), "");
  EXPECT_EMBER_ERROR(cuda::Event(), "");
  // The CPU keeps working after the failed attempts.
  EXPECT_NEAR(sum(x).item(), 6.0, 1e-6);
}

#ifdef EMBER_HAS_CUDA
TEST(CudaBackend, StatusChecksBecomeEmberErrorsNamingTheStatus) {
  EXPECT_EMBER_ERROR(EMBER_CUDA_CHECK(cudaErrorInvalidValue), "cudaErrorInvalidValue");
  EXPECT_EMBER_ERROR(EMBER_CUDA_CHECK(CUBLAS_STATUS_INVALID_VALUE), "CUBLAS_STATUS_INVALID_VALUE");
  EXPECT_EMBER_ERROR(EMBER_CUDA_CHECK(CURAND_STATUS_LAUNCH_FAILURE), "CURAND_STATUS_LAUNCH_FAILURE");
  EXPECT_EMBER_ERROR(EMBER_CUDA_CHECK(CUSPARSE_STATUS_INVALID_VALUE), "cuSPARSE");
  EXPECT_EMBER_ERROR(EMBER_CUDA_CHECK(cudaErrorMemoryAllocation), "cuda_backend_test.cpp");  // names the call site
  EXPECT_NO_THROW(EMBER_CUDA_CHECK(cudaSuccess));
}
#endif

TEST(CudaBackend, CopiesRoundTripAllDtypesAndViews) {
  EMBER_SKIP_WITHOUT_GPU();
  Tensor f = random({5, 7}, 1).to(DType::Float32), d = random({3, 4}, 2), i = randint({9}, -50, 50);
  for (const Tensor& t : {f, d, i}) {
    Tensor g = t.to(Device::CUDA);
    EXPECT_EQ(g.device(), Device::CUDA);
    EXPECT_EQ(g.dtype(), t.dtype());
    EXPECT_TRUE(all_close(g.to(Device::CPU), t, 0, 0));
  }
  Tensor tv = f.t();  // a non-contiguous view goes over as its values
  EXPECT_TRUE(all_close(tv.to(Device::CUDA).to(Device::CPU), tv, 0, 0));
  Tensor g = f.to(Device::CUDA);
  EXPECT_TRUE(all_close(g.t().contiguous().to(Device::CPU), tv, 0, 0));  // strided copy kernel
  Tensor target = zeros({7, 5}, DType::Float32, Device::CUDA);
  target.slice(0, 2, 5).copy_(g.t().slice(0, 2, 5));
  EXPECT_TRUE(all_close(target.slice(0, 2, 5).to(Device::CPU), tv.slice(0, 2, 5), 0, 0));
  EXPECT_EQ(target.to(Device::CPU).at({0, 0}), 0.0);
}

TEST(CudaBackend, CachingAllocatorCountsAndReusesBlocks) {
  EMBER_SKIP_WITHOUT_GPU();
  Allocator& a = allocator(Device::CUDA);
  a.empty_cache();
  reset_peak_memory(Device::CUDA);
  MemoryStats s0 = memory_stats(Device::CUDA);
  {
    Tensor t = empty({1000}, DType::Float32, Device::CUDA);  // 4000 bytes -> one 4096-byte block
    MemoryStats s1 = memory_stats(Device::CUDA);
    EXPECT_EQ(s1.current_bytes - s0.current_bytes, 4096);
    EXPECT_GE(s1.peak_bytes, s1.current_bytes);
  }
  MemoryStats s2 = memory_stats(Device::CUDA);
  EXPECT_EQ(s2.current_bytes, s0.current_bytes);
  EXPECT_EQ(s2.cached_bytes, 4096);
  EXPECT_EQ(s2.peak_bytes - s0.current_bytes, 4096);
  Tensor again = empty({1020}, DType::Float32, Device::CUDA);  // same bin: served from the cache
  EXPECT_EQ(memory_stats(Device::CUDA).cached_bytes, 0);
  again = Tensor();
  a.empty_cache();
  EXPECT_EQ(memory_stats(Device::CUDA).cached_bytes, 0);
}

TEST(CudaBackend, EventsTimeAndStreamsWait) {
  EMBER_SKIP_WITHOUT_GPU();
  cuda::Event start, stop;
  start.record();
  Tensor x = cuda::randn({512, 512}, DType::Float32, 3);
  Tensor y = matmul(x, x);
  stop.record();
  stop.synchronize();
  EXPECT_GE(stop.elapsed_ms(start), 0.0f);
  cuda::Stream s;
  s.wait(stop);
  s.synchronize();
  EXPECT_FALSE(cuda::device_name().empty());
  EXPECT_GT(cuda::l2_cache_bytes(), 0);
}

TEST(CudaBackend, CurandDrawsHaveTheRightMoments) {
  EMBER_SKIP_WITHOUT_GPU();
  for (DType dt : {DType::Float32, DType::Float64}) {
    Tensor u = cuda::rand({100001}, dt, 42).to(Device::CPU);
    EXPECT_EQ(u.dtype(), dt);
    std::vector<double> v = u.to_vector<double>();
    double mean = 0, lo = 1, hi = 0;
    for (double x : v) mean += x, lo = std::min(lo, x), hi = std::max(hi, x);
    mean /= double(v.size());
    EXPECT_NEAR(mean, 0.5, 0.01);
    EXPECT_GE(lo, 0.0);
    EXPECT_LT(hi, 1.0);
    Tensor n = cuda::normal({3, 33335}, 2.0, 3.0, dt, 7);  // odd count: cuRAND needs pairs
    EXPECT_EQ(n.shape(), (Shape{3, 33335}));
    std::vector<double> w = n.to_vector<double>();
    double m = 0, sq = 0;
    for (double x : w) m += x;
    m /= double(w.size());
    for (double x : w) sq += (x - m) * (x - m);
    EXPECT_NEAR(m, 2.0, 0.05);
    EXPECT_NEAR(std::sqrt(sq / double(w.size())), 3.0, 0.05);
    // Same seed, same numbers.
    EXPECT_TRUE(all_close(cuda::rand({64}, dt, 5).to(Device::CPU), cuda::rand({64}, dt, 5).to(Device::CPU), 0, 0));
  }
}
