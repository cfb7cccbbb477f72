// The house that the build enforces (each layer a library linked with --no-undefined), checked
// once more from the includes, so that a wrong include is caught even before it is called:
//   core (framework/, framework/autograd/, the CUDA loader) <- ops <- nn (nn, optim, data, io,
//   dist, functional) <- models <- examples; the CUDA and NCCL backends sit beside ops and dist.
// No file outside the backends includes a CUDA or NCCL header.
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "test_util.h"

namespace fs = std::filesystem;

namespace {

enum Layer { Core, Ops, Nn, Models, Examples, CudaBackend, NcclBackend, Unknown };
const char* kNames[] = {"core", "ops", "nn", "models", "examples", "cuda backend", "nccl backend", "?"};

bool starts(const std::string& s, const char* p) { return s.rfind(p, 0) == 0; }

// Which layer a path (relative to the source root) belongs to.
Layer layer_of(const std::string& p) {
  if (starts(p, "framework/dist/nccl/")) return NcclBackend;
  if (starts(p, "framework/cuda/"))
    return (p == "framework/cuda/cuda.h" || p == "framework/cuda/runtime_hooks.h" || p == "framework/cuda/loader.cpp")
               ? Core
               : CudaBackend;
  for (const char* nn : {"framework/nn/", "framework/optim/", "framework/data/", "framework/io/", "framework/dist/",
                         "framework/functional/"})
    if (starts(p, nn)) return Nn;
  if (starts(p, "framework/")) return Core;
  if (starts(p, "ops/")) return p.find("/cuda/") != std::string::npos ? CudaBackend : Ops;
  if (starts(p, "models/")) return Models;
  if (starts(p, "examples/")) return Examples;
  return Unknown;
}

// What each layer may include (itself and the layers below it).
bool may_include(Layer from, Layer to) {
  static const std::set<std::pair<int, int>> allowed = {
      {Core, Core},
      {Ops, Core}, {Ops, Ops},
      {Nn, Core}, {Nn, Ops}, {Nn, Nn},
      {Models, Core}, {Models, Ops}, {Models, Nn}, {Models, Models},
      {CudaBackend, Core}, {CudaBackend, Ops}, {CudaBackend, CudaBackend},
      {NcclBackend, Core}, {NcclBackend, Ops}, {NcclBackend, Nn}, {NcclBackend, CudaBackend}, {NcclBackend, NcclBackend},
  };
  if (from == Examples) return to != Unknown;
  return allowed.count({from, to}) > 0;
}

bool is_source(const fs::path& p) {
  const std::string e = p.extension().string();
  return e == ".h" || e == ".cpp" || e == ".cu" || e == ".cuh";
}

std::vector<std::string> sources() {
  std::vector<std::string> out;
  const fs::path root(EMBER_SOURCE_DIR);
  for (const char* top : {"framework", "ops", "models", "examples"})
    for (const auto& e : fs::recursive_directory_iterator(root / top))
      if (e.is_regular_file() && is_source(e.path())) out.push_back(fs::relative(e.path(), root).string());
  return out;
}

}  // namespace

TEST(Layers, EveryFileIsInALayer) {
  std::vector<std::string> files = sources();
  EXPECT_GT(files.size(), 100u);
  for (const std::string& f : files) EXPECT_NE(layer_of(f), Unknown) << f;
}

TEST(Layers, NoIncludePointsUpTheHouse) {
  const std::regex include_re(R"(^\s*#\s*include\s*"([^"]+)\")");
  std::vector<std::string> wrong;
  int checked = 0;
  for (const std::string& f : sources()) {
    std::ifstream in(fs::path(EMBER_SOURCE_DIR) / f);
    std::string line;
    Layer from = layer_of(f);
    while (std::getline(in, line)) {
      std::smatch m;
      if (!std::regex_search(line, m, include_re)) continue;
      const std::string target = m[1];
      Layer to = layer_of(target);
      if (to == Unknown) continue;  // a header beside the file ("gemm_view.h"), a third-party one
      ++checked;
      if (!may_include(from, to))
        wrong.push_back(f + " (" + kNames[from] + ") includes " + target + " (" + kNames[to] + ")");
    }
  }
  EXPECT_GT(checked, 300);
  std::string all;
  for (const std::string& w : wrong) all += "\n  " + w;
  EXPECT_TRUE(wrong.empty()) << wrong.size() << " includes point up the house:" << all;
}

TEST(Layers, OnlyTheBackendsIncludeCudaOrNccl) {
  const std::regex cuda_re(R"(^\s*#\s*include\s*<(cuda\w*|cublas\w*|cusparse\w*|curand\w*|nccl|thrust/[^>]+)(\.h)?>)");
  std::vector<std::string> wrong;
  for (const std::string& f : sources()) {
    Layer l = layer_of(f);
    if (l == CudaBackend || l == NcclBackend || l == Examples) continue;
    std::ifstream in(fs::path(EMBER_SOURCE_DIR) / f);
    std::string line;
    while (std::getline(in, line))
      if (std::regex_search(line, cuda_re)) wrong.push_back(f + ": " + line);
  }
  std::string all;
  for (const std::string& w : wrong) all += "\n  " + w;
  EXPECT_TRUE(wrong.empty()) << all;
}

TEST(Layers, TheCheckItselfCatchesAWrongInclude) {
  EXPECT_FALSE(may_include(Core, Ops));
  EXPECT_FALSE(may_include(Ops, Nn));
  EXPECT_FALSE(may_include(Nn, Models));
  EXPECT_FALSE(may_include(Models, Examples));
  EXPECT_FALSE(may_include(Ops, CudaBackend));
  EXPECT_EQ(layer_of("framework/autograd/primitive.h"), Core);
  EXPECT_EQ(layer_of("framework/cuda/allocator.cpp"), CudaBackend);
  EXPECT_EQ(layer_of("ops/matmul/cuda/dispatch.cpp"), CudaBackend);
  EXPECT_EQ(layer_of("framework/optim/adam.h"), Nn);
}
