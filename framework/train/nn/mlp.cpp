#include "framework/train/nn/mlp.h"

#include "framework/train/nn/dropout.h"

namespace ember::nn {

std::shared_ptr<Sequential> make_mlp(const std::vector<int64_t>& sizes, const MLPOptions& opt) {
  EMBER_CHECK(sizes.size() >= 2, "make_mlp: need at least the input and output sizes, got ", sizes.size(), " sizes");
  Generator gen(opt.seed);
  auto net = std::make_shared<Sequential>();
  for (size_t i = 0; i + 1 < sizes.size(); ++i) {
    bool last = i + 2 == sizes.size();
    // The output layer feeds a softmax, not a ReLU: Xavier suits it better than He's gain.
    Init init = (last && opt.init == Init::KaimingUniform) ? Init::XavierUniform : opt.init;
    net->add(std::make_shared<Linear>(sizes[i], sizes[i + 1], gen, LinearOptions{true, init, opt.dtype}));
    if (!last) {
      net->add(std::make_shared<ActivationLayer>(opt.activation));
      if (opt.dropout > 0) net->add(std::make_shared<Dropout>(opt.dropout, opt.seed * 1000003 + i + 1));
    }
  }
  return net;
}

}  // namespace ember::nn
