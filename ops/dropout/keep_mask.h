// Dropout's random mask as a pure function of (seed, element index): counter-based, so the mask
// does not depend on how threads (or CUDA blocks) split the work, and CPU and GPU draw the same
// mask for the same seed. The generator is advanced once per dropout call to get the seed.
#pragma once
#include <cstdint>

#include "framework/core/host_device.h"

namespace ember {

// splitmix64's output function applied to the i-th step from `seed`: a well-mixed 64-bit value.
EMBER_HD inline uint64_t dropout_bits(uint64_t seed, uint64_t i) {
  uint64_t z = seed + (i + 1) * 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// Element i survives when its uniform draw in [0, 1) is at least p, i.e. with probability 1 - p.
EMBER_HD inline bool dropout_keep(uint64_t seed, uint64_t i, double p) {
  return double(dropout_bits(seed, i) >> 11) * (1.0 / 9007199254740992.0) >= p;
}

}  // namespace ember
