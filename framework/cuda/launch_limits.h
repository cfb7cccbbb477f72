// The launch limits of the GPUs Ember is checked for (H100 and H200, compute capability 9.0: the
// same limits on both), and a check of one kernel launch against them. Plain C++, no CUDA headers:
// tests/framework/cuda/launch_limits_test.cpp checks every kernel family's launch for the largest
// shapes the benchmarks use on a machine without a GPU.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace ember::cuda {

struct DeviceLimits {
  const char* name;
  int64_t max_threads_per_block;
  int64_t max_block[3];          // per dimension
  int64_t max_grid[3];           // per dimension
  int64_t max_static_smem;       // bytes of __shared__ arrays a kernel may declare
  int64_t max_smem_per_block;    // static + dynamic, once cudaFuncSetAttribute raises the limit (opt-in)
};

// CUDA C++ Programming Guide, "Compute capabilities", 9.0; cudaGetDeviceProperties on an H100
// reports the same (sharedMemPerBlockOptin 232448 bytes).
constexpr DeviceLimits kHopper{"H100/H200 (sm_90)",
                               1024,
                               {1024, 1024, 64},
                               {(int64_t(1) << 31) - 1, 65535, 65535},
                               48 * 1024,
                               227 * 1024};

// One launch as the host code computes it.
struct LaunchConfig {
  std::string kernel;
  int64_t grid[3] = {1, 1, 1};
  int64_t block[3] = {1, 1, 1};
  int64_t static_smem = 0;   // bytes of __shared__ declarations
  int64_t dynamic_smem = 0;  // bytes passed as the third launch argument
};

// What is wrong with a launch on that device, one line each; empty when it fits.
inline std::vector<std::string> launch_problems(const LaunchConfig& c, const DeviceLimits& d) {
  std::vector<std::string> out;
  const char* axis = "xyz";
  auto say = [&](const std::string& what) { out.push_back(c.kernel + ": " + what + " (limit of " + d.name + ")"); };
  int64_t threads = 1;
  for (int i = 0; i < 3; ++i) {
    if (c.block[i] < 1 || c.block[i] > d.max_block[i])
      say(std::string("block.") + axis[i] + " = " + std::to_string(c.block[i]) + ", outside 1.." + std::to_string(d.max_block[i]));
    if (c.grid[i] < 1 || c.grid[i] > d.max_grid[i])
      say(std::string("grid.") + axis[i] + " = " + std::to_string(c.grid[i]) + ", outside 1.." + std::to_string(d.max_grid[i]));
    threads *= c.block[i];
  }
  if (threads > d.max_threads_per_block)
    say(std::to_string(threads) + " threads per block, more than " + std::to_string(d.max_threads_per_block));
  if (c.static_smem > d.max_static_smem)
    say(std::to_string(c.static_smem) + " bytes of static shared memory, more than " + std::to_string(d.max_static_smem));
  if (c.static_smem + c.dynamic_smem > d.max_smem_per_block)
    say(std::to_string(c.static_smem + c.dynamic_smem) + " bytes of shared memory per block, more than the opt-in " +
        std::to_string(d.max_smem_per_block));
  return out;
}

}  // namespace ember::cuda
