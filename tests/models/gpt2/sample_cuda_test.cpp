// sample_next on CUDA logits (ranked on the GPU by ops/select) draws the same tokens as on the CPU
// for the same generator state, under greedy, top-k, top-p and both. Skipped without a GPU.
#include "cuda_test_util.h"
#include "models/gpt2/generate.h"
#include "test_util.h"

using namespace ember;
using namespace ember::gpt2;

TEST(Gpt2SampleCuda, DrawsMatchCpu) {
  EMBER_SKIP_WITHOUT_GPU();
  Generator init(3);
  // Distinct logits (the CPU's partial_sort leaves the order of equal logits unspecified).
  Tensor logits = normal({1000}, 0.0, 2.0, DType::Float32, &init);
  Tensor dev = logits.to(Device::CUDA);
  struct Case {
    double temperature;
    int64_t top_k;
    double top_p;
  };
  for (Case c : std::vector<Case>{{0.0, 0, 1.0}, {1.0, 0, 1.0}, {0.8, 5, 1.0}, {1.0, 0, 0.9}, {1.3, 50, 0.5}, {1.0, 1000, 0.99}}) {
    SamplingOptions s;
    s.temperature = c.temperature;
    s.top_k = c.top_k;
    s.top_p = c.top_p;
    Generator a(11), b(11);
    for (int i = 0; i < 50; ++i)
      EXPECT_EQ(sample_next(dev, s, a), sample_next(logits, s, b))
          << "draw " << i << " temperature " << c.temperature << " top_k " << c.top_k << " top_p " << c.top_p;
  }
}
