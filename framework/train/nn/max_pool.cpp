#include "framework/train/nn/max_pool.h"

namespace ember::nn {

MaxPool2d::MaxPool2d(Pair k, Pair s, Pair p) : kernel(k), stride(s[0] == 0 && s[1] == 0 ? k : s), padding(p) {
  EMBER_CHECK(k[0] > 0 && k[1] > 0, "MaxPool2d: the kernel size must be positive, got [", k[0], ", ", k[1], "]");
}

std::string MaxPool2d::name() const {
  return str("MaxPool2d(kernel=", kernel[0], "x", kernel[1], ", stride=", stride[0], "x", stride[1], ")");
}

}  // namespace ember::nn
