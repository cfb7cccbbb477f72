// Random tensors generated on the GPU with cuRAND's Philox generator.
#include "framework/cuda/check.h"
#include "framework/core/cuda.h"
#include "framework/core/cuda_hooks.h"
#include "ops/elementwise/elementwise.h"

namespace ember::cuda {
namespace {

// One generator per call: cheap next to the draw for the tensor sizes that matter, and it keeps
// results a pure function of the seed.
struct Curand {
  curandGenerator_t g = nullptr;
  explicit Curand(uint64_t seed) {
    ensure_backend();
    EMBER_CUDA_CHECK(curandCreateGenerator(&g, CURAND_RNG_PSEUDO_PHILOX4_32_10));
    EMBER_CUDA_CHECK(curandSetPseudoRandomGeneratorSeed(g, seed));
  }
  ~Curand() { curandDestroyGenerator(g); }
};

void check_float(DType dtype, const char* op) {
  EMBER_CHECK(is_floating(dtype), op, ": dtype must be float32 or float64, got ", dtype);
}


Tensor uniform(const Shape& shape, DType dtype, uint64_t seed) {
  check_float(dtype, "cuda::rand");
  Tensor t = empty(shape, dtype, Device::CUDA);
  if (t.numel() == 0) return t;
  Curand r(seed);
  // cuRAND draws from (0, 1]; 1 - u maps it onto [0, 1) like the CPU generator.
  if (dtype == DType::Float32) EMBER_CUDA_CHECK(curandGenerateUniform(r.g, t.data<float>(), size_t(t.numel())));
  else EMBER_CUDA_CHECK(curandGenerateUniformDouble(r.g, t.data<double>(), size_t(t.numel())));
  return 1.0 - t;
}

Tensor gaussian(const Shape& shape, double mean, double stddev, DType dtype, uint64_t seed) {
  check_float(dtype, "cuda::normal");
  int64_t n = numel(shape);
  // cuRAND's normal generators fill an even count (they produce pairs), so draw into n rounded up.
  Tensor buf = empty({n + (n & 1)}, dtype, Device::CUDA);
  if (n > 0) {
    Curand r(seed);
    if (dtype == DType::Float32)
      EMBER_CUDA_CHECK(curandGenerateNormal(r.g, buf.data<float>(), size_t(buf.numel()), float(mean), float(stddev)));
    else
      EMBER_CUDA_CHECK(curandGenerateNormalDouble(r.g, buf.data<double>(), size_t(buf.numel()), mean, stddev));
  }
  return buf.slice(0, 0, n).reshape(shape);
}

const bool registered = [] {
  runtime::rand.set(&uniform);
  runtime::normal.set(&gaussian);
  return true;
}();

}  // namespace

}  // namespace ember::cuda
