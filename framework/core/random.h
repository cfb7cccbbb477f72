// Random tensors on the CPU, deterministic for a seed on every platform: one splitmix64 stream per
// Generator, and a process-wide default generator that manual_seed() resets.
#pragma once
#include <cstdint>

#include "framework/core/tensor.h"

namespace ember {

class Generator {
 public:
  explicit Generator(uint64_t seed = 0x5eed) : state_(seed) {}
  uint64_t next_u64();  // splitmix64
  double uniform();     // [0, 1)
  double normal();      // standard normal, Box-Muller
  void seed(uint64_t s) { state_ = s; has_spare_ = false; }

 private:
  uint64_t state_;
  bool has_spare_ = false;
  double spare_ = 0;
};
Generator& default_generator();
void manual_seed(uint64_t seed);
Tensor rand(const Shape& shape, DType dtype = DType::Float32, Generator* gen = nullptr);   // U[0, 1)
Tensor randn(const Shape& shape, DType dtype = DType::Float32, Generator* gen = nullptr);  // N(0, 1)
Tensor uniform(const Shape& shape, double lo, double hi, DType dtype = DType::Float32, Generator* gen = nullptr);
Tensor normal(const Shape& shape, double mean, double stddev, DType dtype = DType::Float32,
              Generator* gen = nullptr);
Tensor randint(const Shape& shape, int64_t lo, int64_t hi, Generator* gen = nullptr);  // int64 in [lo, hi)

}  // namespace ember
