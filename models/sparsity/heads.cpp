#include "models/sparsity/heads.h"

#include <cmath>

namespace ember::sparsity {

namespace {
void check_heads(const Tensor& heads, const char* op) {
  EMBER_CHECK(heads.defined() && heads.dim() == 4 && heads.dtype() == DType::Float32, op,
              ": expected float32 head outputs (B, H, T, head_dim), got ",
              heads.defined() ? str(heads.dtype(), to_string(heads.shape())) : "an undefined tensor");
  check_cpu(heads, op);
}
}  // namespace

Tensor head_norms(const Tensor& heads) {
  check_heads(heads, "head_norms");
  Tensor c = heads.detach().contiguous();
  int64_t B = c.size(0), H = c.size(1), T = c.size(2), D = c.size(3);
  Tensor out = empty({B, T, H}, DType::Float32);
  const float* p = c.data<float>();
  float* o = out.data<float>();
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t t = 0; t < T; ++t) {
        const float* v = p + ((b * H + h) * T + t) * D;
        double s = 0;
        for (int64_t d = 0; d < D; ++d) s += double(v[d]) * double(v[d]);
        o[(b * T + t) * H + h] = float(std::sqrt(s));
      }
  return out;
}

Tensor apply_head_mask(const Tensor& heads, const Tensor& mask) {
  check_heads(heads, "apply_head_mask");
  int64_t B = heads.size(0), H = heads.size(1), T = heads.size(2), D = heads.size(3);
  EMBER_CHECK(mask.defined() && mask.shape() == Shape({B, T, H}) && mask.dtype() == DType::Float32,
              "apply_head_mask: mask must be float32 (", B, ", ", T, ", ", H, ") for heads ", to_string(heads.shape()),
              ", got ", mask.defined() ? str(mask.dtype(), to_string(mask.shape())) : "undefined");
  Tensor c = heads.detach().contiguous().clone();
  Tensor m = mask.detach().contiguous();
  float* p = c.data<float>();
  const float* mp = m.data<float>();
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t t = 0; t < T; ++t) {
        float keep = mp[(b * T + t) * H + h];
        float* v = p + ((b * H + h) * T + t) * D;
        for (int64_t d = 0; d < D; ++d) v[d] *= keep;
      }
  return c;
}

}  // namespace ember::sparsity
