#include "cnn_model.h"

#include "framework/train/nn/nn.h"

namespace ember::examples {
namespace {

// (N, side * side) rows of pixels as (N, 1, side, side) images; a view, no copy.
class AsImages : public nn::Module {
 public:
  explicit AsImages(int64_t side) : side_(side) {}
  Tensor forward(const Tensor& x) override {
    EMBER_CHECK(x.dim() == 2 && x.size(1) == side_ * side_, "AsImages: expected rows of ", side_ * side_,
                " pixels, got shape ", to_string(x.shape()));
    return x.reshape({x.size(0), 1, side_, side_});
  }
  std::string name() const override { return str("AsImages(1, ", side_, ", ", side_, ")"); }

 private:
  int64_t side_;
};

}  // namespace

std::shared_ptr<nn::Sequential> make_cnn(const CnnOptions& o) {
  EMBER_CHECK(o.side % 4 == 0 && o.side > 0, "make_cnn: the image side (", o.side, ") must be a multiple of 4 (two 2x2 pools)");
  Generator gen(o.seed);
  Conv2dOptions same;
  same.padding = {1, 1};
  auto net = std::make_shared<nn::Sequential>();
  net->add(std::make_shared<AsImages>(o.side));
  int64_t in = 1;
  for (int64_t out : {o.channels1, o.channels2}) {
    net->add(std::make_shared<nn::Conv2d>(in, out, std::array<int64_t, 2>{3, 3}, gen, same, /*bias=*/false));
    net->add(std::make_shared<nn::BatchNorm2d>(out));
    net->add(std::make_shared<nn::ActivationLayer>(nn::Activation::ReLU));
    net->add(std::make_shared<nn::MaxPool2d>(Pair{2, 2}));
    in = out;
  }
  net->add(std::make_shared<nn::Flatten>());
  net->add(std::make_shared<nn::Linear>(o.channels2 * (o.side / 4) * (o.side / 4), o.classes, gen));
  return net;
}

}  // namespace ember::examples
