// Fashion-MNIST (Xiao, Rasul and Vollgraf, 2017): 28x28 grey images of clothing in 10 classes,
// 60000 for training and 10000 for testing, as IDX files from Debian's dataset-fashion-mnist.
#pragma once
#include <array>
#include <memory>
#include <string>

#include "framework/train/data/dataset.h"

namespace ember::data {

constexpr const char* kFashionMnistDir = "/usr/share/datasets/fashion-mnist";
constexpr const char* kFashionMnistPackage = "dataset-fashion-mnist";
extern const std::array<const char*, 10> kFashionMnistClasses;

struct FashionMnistOptions {
  std::string dir = kFashionMnistDir;
  bool normalize = true;  // (x - mean) / std with the training set's pixel statistics, else x in [0, 1]
  int64_t limit = 0;      // keep only the first `limit` examples (0: all), for quick runs
};

// inputs: float32 (N, 784); targets: int64 (N). A missing file raises ember::Error that names the
// file and the apt package to install.
std::shared_ptr<TensorDataset> load_fashion_mnist(bool train, const FashionMnistOptions& opt = {});
// Whether the four files are present in `dir`.
bool fashion_mnist_available(const std::string& dir = kFashionMnistDir);

}  // namespace ember::data
