#include "framework/train/data/fashion_mnist.h"

#include <sys/stat.h>

#include "framework/train/data/idx.h"

namespace ember::data {

const std::array<const char*, 10> kFashionMnistClasses = {"T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
                                                          "Sandal",      "Shirt",   "Sneaker",  "Bag",   "Ankle boot"};

namespace {
// Mean and standard deviation of the training set's pixels in [0, 1].
constexpr double kMean = 0.2860, kStd = 0.3530;

bool exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::string file_path(const std::string& dir, bool train, bool labels) {
  return dir + "/" + (train ? "train" : "t10k") + (labels ? "-labels-idx1-ubyte.gz" : "-images-idx3-ubyte.gz");
}

std::string require(const std::string& path) {
  EMBER_CHECK(exists(path), "Fashion-MNIST: '", path, "' not found; install the Debian package ", kFashionMnistPackage,
              " (sudo apt-get install ", kFashionMnistPackage, ") or pass the folder that holds the IDX files");
  return path;
}
}  // namespace

bool fashion_mnist_available(const std::string& dir) {
  for (bool train : {true, false})
    for (bool labels : {true, false})
      if (!exists(file_path(dir, train, labels))) return false;
  return true;
}

std::shared_ptr<TensorDataset> load_fashion_mnist(bool train, const FashionMnistOptions& opt) {
  IdxArray images = read_idx(require(file_path(opt.dir, train, false)));
  IdxArray labels = read_idx(require(file_path(opt.dir, train, true)));
  const std::string what = train ? "Fashion-MNIST training set" : "Fashion-MNIST test set";
  EMBER_CHECK(images.type_code == 0x08 && images.dims.size() == 3, what, ": expected unsigned-byte images of shape (N, rows, cols), got ",
              images.dims.size(), " dims, type code ", int(images.type_code));
  EMBER_CHECK(labels.type_code == 0x08 && labels.dims.size() == 1, what, ": expected unsigned-byte labels of shape (N)");
  EMBER_CHECK(images.dims[0] == labels.dims[0], what, ": ", images.dims[0], " images but ", labels.dims[0], " labels");
  int64_t n = images.dims[0], pixels = images.dims[1] * images.dims[2];
  Tensor x = images.to_float(1.0 / 255.0).reshape({n, pixels});
  Tensor y = labels.to_int64();
  const int64_t* yd = y.data<int64_t>();
  for (int64_t i = 0; i < n; ++i)
    EMBER_CHECK(yd[i] >= 0 && yd[i] < 10, what, ": label ", yd[i], " of example ", i, " is not a class in [0, 10)");
  if (opt.normalize) {
    float* xd = x.data<float>();
    const float mean = float(kMean), inv_std = float(1.0 / kStd);
    for (int64_t k = 0, m = x.numel(); k < m; ++k) xd[k] = (xd[k] - mean) * inv_std;
  }
  if (opt.limit > 0 && opt.limit < n) {
    x = x.narrow(0, 0, opt.limit).clone();
    y = y.narrow(0, 0, opt.limit).clone();
  }
  return std::make_shared<TensorDataset>(x, y);
}

}  // namespace ember::data
