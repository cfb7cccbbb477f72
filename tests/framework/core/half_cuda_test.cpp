// 16-bit float tensors on CUDA (run by scripts/gpu_check.sh through its *Cuda* filter; skipped
// without a GPU): storage moves the bits both ways, strided copies and fills run the byte-moving
// kernels, and casts convert through the host with the CPU's rounding.
#include "cuda_test_util.h"
#include "test_util.h"

using namespace ember;

namespace {

TEST(HalfCuda, CopiesFillsAndCastsKeepTheCpuBits) {
  EMBER_SKIP_WITHOUT_GPU();
  for (DType dt : {DType::BFloat16, DType::Float16}) {
    SCOPED_TRACE(name(dt));
    Tensor x = ember::testing::random({6, 5}, 1).to(dt);
    Tensor g = x.to(Device::CUDA);
    EXPECT_EQ(g.dtype(), dt);
    EXPECT_EQ(g.to(Device::CPU).to_vector<double>(), x.to_vector<double>());
    EXPECT_EQ(g.t().contiguous().to(Device::CPU).to_vector<double>(), x.t().to_vector<double>());
    Tensor f = full({3, 4}, 0.1, dt, Device::CUDA);
    EXPECT_EQ(f.to(Device::CPU).to_vector<double>(), full({3, 4}, 0.1, dt).to_vector<double>());
    Tensor c = g.to(DType::Float32);
    EXPECT_EQ(c.device(), Device::CUDA);
    EXPECT_EQ(c.to(Device::CPU).to_vector<double>(), x.to(DType::Float32).to_vector<double>());
  }
}

}  // namespace
