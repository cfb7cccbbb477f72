// Autocast's op lists (the scope itself is framework/core/autograd/autocast.h). Inside an
// autocast scope, at dispatch:
//   lower-precision ops: float32 floating inputs are cast to the scope's dtype (bfloat16 or
//     float16), so the op computes and returns that dtype;
//   float32 ops: bfloat16 and float16 inputs are cast up to float32;
//   every other op runs on the dtypes it is given (binary ops already promote a half operand
//     beside a float32 one to float32).
// float64 inputs are never cast, as in torch.autocast. The casts are recorded, so gradients reach
// the original tensors in their own dtype.
#pragma once
#include <string>
#include <vector>

namespace ember::autocast {

std::vector<std::string> lower_precision_ops();  // matmul, linear, attention
std::vector<std::string> float32_ops();          // softmax family, norms, losses, reductions, exp/log/pow

}  // namespace ember::autocast
