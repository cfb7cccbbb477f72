#include "framework/train/nn/dropout.h"

#include "ops/dropout/dropout.h"

namespace ember::nn {

Dropout::Dropout(double prob, uint64_t seed) : p(prob), gen(seed) {
  EMBER_CHECK(prob >= 0.0 && prob < 1.0, "Dropout: p must be in [0, 1), got ", prob);
}

Tensor Dropout::forward(const Tensor& x) { return dropout(x, p, is_training(), &gen); }

std::string Dropout::name() const { return str("Dropout(p=", p, ")"); }

}  // namespace ember::nn
