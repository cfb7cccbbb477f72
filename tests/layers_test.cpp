// The house that the build enforces (each layer folder a library linked with --no-undefined),
// checked once more from the includes, so that a wrong include is caught even before it is called:
//   framework/core <- ops <- framework/train <- models <- examples
// Every folder named cuda/ is the CUDA backend, framework/train/dist/nccl/ the NCCL backend.
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

enum Layer { Core, Ops, Train, Models, Examples, CudaBackend, NcclBackend, Unknown };
const char* kNames[] = {"core", "ops", "train", "models", "examples", "cuda backend", "nccl backend", "?"};

// The layer of each folder, longest prefix first; the one rule beside it: a cuda/ folder inside a
// layer belongs to the CUDA backend.
const std::pair<const char*, Layer> kFolders[] = {
    {"framework/train/dist/nccl/", NcclBackend}, {"framework/core/", Core}, {"framework/train/", Train},
    {"framework/cuda/", CudaBackend},            {"ops/", Ops},              {"models/", Models},
    {"examples/", Examples},
};

// Which layer a path (relative to the source root) belongs to.
Layer layer_of(const std::string& p) {
  for (const auto& [prefix, layer] : kFolders) {
    if (p.rfind(prefix, 0) != 0) continue;
    if (layer != Examples && p.find("/cuda/") != std::string::npos) return CudaBackend;
    return layer;
  }
  return Unknown;
}

// What each layer may include (itself and the layers below it).
bool may_include(Layer from, Layer to) {
  static const std::set<std::pair<int, int>> allowed = {
      {Core, Core},
      {Ops, Core}, {Ops, Ops},
      {Train, Core}, {Train, Ops}, {Train, Train},
      {Models, Core}, {Models, Ops}, {Models, Train}, {Models, Models},
      {CudaBackend, Core}, {CudaBackend, Ops}, {CudaBackend, CudaBackend},
      {NcclBackend, Core}, {NcclBackend, Ops}, {NcclBackend, Train}, {NcclBackend, CudaBackend}, {NcclBackend, NcclBackend},
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
  EXPECT_FALSE(may_include(Ops, Train));
  EXPECT_FALSE(may_include(Train, Models));
  EXPECT_FALSE(may_include(Models, Examples));
  EXPECT_FALSE(may_include(Ops, CudaBackend));
  EXPECT_EQ(layer_of("framework/core/autograd/primitive.h"), Core);
  EXPECT_EQ(layer_of("framework/core/cuda_hooks.h"), Core);
  EXPECT_EQ(layer_of("framework/cuda/allocator.cpp"), CudaBackend);
  EXPECT_EQ(layer_of("ops/matmul/cuda/dispatch.cpp"), CudaBackend);
  EXPECT_EQ(layer_of("framework/train/optim/adam.h"), Train);
  EXPECT_EQ(layer_of("framework/train/dist/nccl/nccl_backend.cpp"), NcclBackend);
  EXPECT_EQ(layer_of("framework/tensor.h"), Unknown);  // no file lies outside a layer folder
}
