// topk_indices on CUDA tensors (through ops/select's Thrust kernels) against the CPU's topk_row.
// Skipped without a GPU.
#include <cmath>

#include "cuda_test_util.h"
#include "models/sparsity/topk.h"
#include "test_util.h"

using namespace ember;
using namespace ember::sparsity;

TEST(SparsityTopkCuda, IndicesMatchCpu) {
  EMBER_SKIP_WITHOUT_GPU();
  Generator g(91);
  std::vector<Tensor> xs = {normal({3, 1}, 0, 1, DType::Float32, &g), normal({3, 33}, 0, 1, DType::Float32, &g),
                            normal({2, 4, 1000}, 0, 1, DType::Float32, &g), randint({4, 127}, -3, 4, &g).to(DType::Float32)};
  for (const Tensor& x : xs)
    for (bool mag : {false, true}) {
      int64_t n = x.size(-1);
      for (int64_t k : std::vector<int64_t>{0, 1, n / 2, n}) {
        Tensor got = topk_indices(x.to(Device::CUDA), k, mag);
        EXPECT_EQ(got.device(), Device::CUDA);
        EXPECT_EQ(got.to(Device::CPU).to_vector<int64_t>(), topk_indices(x, k, mag).to_vector<int64_t>())
            << to_string(x.shape()) << " k " << k << " magnitude " << mag;
      }
    }
  Tensor bad = from_vector(std::vector<float>{1, NAN, 2}, {1, 3}).to(Device::CUDA);
  EXPECT_THROW(topk_indices(bad, 1), Error);
}
