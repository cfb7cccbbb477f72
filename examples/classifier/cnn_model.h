// The convolutional classifier of train_classifier --model cnn: two blocks of 3x3 convolution,
// batch norm, ReLU and 2x2 max pooling, then a linear head, on 28 x 28 grey images given as rows
// of 784 pixels (the data loader's layout).
#pragma once
#include <memory>

#include "framework/train/nn/sequential.h"

namespace ember::examples {

struct CnnOptions {
  int64_t side = 28;              // images are side x side, one channel
  int64_t channels1 = 32, channels2 = 64;
  int64_t classes = 10;
  uint64_t seed = 0;
};

// Sequential: [view (N, 784) as (N, 1, 28, 28)], Conv2d(1, c1, 3x3, padding 1), BatchNorm2d, ReLU,
// MaxPool2d(2), Conv2d(c1, c2, 3x3, padding 1), BatchNorm2d, ReLU, MaxPool2d(2), Flatten,
// Linear(c2 * 7 * 7, classes).
std::shared_ptr<nn::Sequential> make_cnn(const CnnOptions& opt);

}  // namespace ember::examples
