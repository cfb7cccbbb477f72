// A CPU-only program (linked with Ember's CPU layers alone, as every user program is): it must map
// no CUDA library while it computes on the CPU, and map the CUDA backend only once it asks for
// CUDA. Run by CTest (cuda_loads_on_demand); prints its resident memory at start.
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "ember.h"

namespace {

std::vector<std::string> mapped_libraries() {
  std::ifstream maps("/proc/self/maps");
  std::vector<std::string> out;
  std::string line;
  while (std::getline(maps, line)) {
    size_t slash = line.find('/');
    if (slash != std::string::npos) out.push_back(line.substr(slash));
  }
  return out;
}

std::vector<std::string> cuda_mapped() {
  std::vector<std::string> out;
  for (const std::string& lib : mapped_libraries())
    for (const char* name : {"libcuda", "libcudart", "libcublas", "libcusparse", "libcurand", "libnccl", "libember_cuda"})
      if (lib.find(name) != std::string::npos) out.push_back(lib);
  return out;
}

long rss_kib() {
  std::ifstream status("/proc/self/status");
  std::string key;
  long value = -1;
  while (status >> key)
    if (key == "VmRSS:") {
      status >> value;
      break;
    }
  return value;
}

int fail(const std::string& why) {
  std::cerr << "cuda_loads_on_demand: FAILED: " << why << "\n";
  return 1;
}

}  // namespace

int main() {
  using namespace ember;
  std::cout << "resident memory at start: " << rss_kib() << " KiB\n";
  Tensor w = randn({16, 8}, DType::Float64).requires_grad_();
  Tensor loss = sum(tanh(matmul(randn({4, 16}, DType::Float64), w)));
  loss.backward();
  if (!w.grad().defined()) return fail("no gradient");
  for (const std::string& lib : cuda_mapped()) return fail("a CPU-only computation mapped " + lib);
  std::cout << "after CPU work: no CUDA library mapped; resident " << rss_kib() << " KiB\n";

  const bool available = cuda_available();  // asks for CUDA: now the backend may load
  std::vector<std::string> now = cuda_mapped();
  if (cuda::built_with_cuda()) {
    bool backend = false;
    for (const std::string& lib : now) backend |= lib.find("libember_cuda") != std::string::npos;
    if (!backend) return fail("cuda_available() did not load libember_cuda.so: " + cuda::unavailable_reason());
    std::cout << "after cuda_available() (" << (available ? "a GPU" : cuda::unavailable_reason())
              << "): libember_cuda.so loaded on demand\n";
  } else {
    if (!now.empty()) return fail("a build without CUDA mapped " + now[0]);
    if (cuda::unavailable_reason().find("without CUDA") == std::string::npos)
      return fail("unexpected reason: " + cuda::unavailable_reason());
    std::cout << "built without CUDA: " << cuda::unavailable_reason() << "\n";
  }
  return 0;
}
