#include "ops/embedding/cpu/embedding_kernels.h"

#include <algorithm>

#include "framework/core/parallel.h"
#include "ops/elementwise/cpu/half_cast.h"

namespace ember::cpu {

Tensor checked_ids(const Tensor& ids, int64_t num_embeddings, const char* op) {
  Tensor t = ids.contiguous();
  const int64_t* p = t.data<int64_t>();
  for (int64_t i = 0; i < t.numel(); ++i)
    EMBER_CHECK(p[i] >= 0 && p[i] < num_embeddings, op, ": id ", p[i], " at flat index ", i,
                " is out of range for a table of ", num_embeddings, " rows (expected 0 to ", num_embeddings - 1, ")");
  return t;
}

Tensor embedding(const Tensor& weight, const Tensor& ids_in) {
  int64_t V = weight.size(0), D = weight.size(1);
  Tensor ids = checked_ids(ids_in, V, "embedding");
  Shape os = ids.shape();
  os.push_back(D);
  Tensor out = empty(os, weight.dtype());
  int64_t n = ids.numel(), sv = weight.strides()[0], sd = weight.strides()[1];
  const int64_t* id = ids.data<int64_t>();
  // A row copy: every dtype that stores floats moves as it is, the 16-bit ones included.
  EMBER_DISPATCH_FLOAT_AND_HALF(weight.dtype(), "embedding", [&] {
    const scalar_t* w = static_cast<const scalar_t*>(weight.impl()->storage->data()) + weight.offset();
    scalar_t* o = out.data<scalar_t>();
    parallel_for(n, std::max<int64_t>(1, 16384 / std::max<int64_t>(D, 1)), [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        const scalar_t* src = w + id[i] * sv;
        scalar_t* dst = o + i * D;
        if (sd == 1) std::copy(src, src + D, dst);
        else for (int64_t k = 0; k < D; ++k) dst[k] = src[k * sd];
      }
    });
  });
  return out;
}

Tensor embedding_backward(const Tensor& g_in, const Tensor& ids_in, int64_t V) {
  if (is_half(g_in.dtype()))  // the row sums run in float32 and round once
    return cast_half(embedding_backward(cast_half(g_in, DType::Float32), ids_in, V), g_in.dtype());
  Tensor ids = checked_ids(ids_in, V, "embedding_backward");
  Tensor g = g_in.contiguous();
  int64_t D = g.size(-1), n = ids.numel();
  Tensor out = zeros({V, D}, g.dtype());
  const int64_t* id = ids.data<int64_t>();
  EMBER_DISPATCH_FLOAT(g.dtype(), "embedding_backward", [&] {
    const scalar_t* pg = g.data<scalar_t>();
    scalar_t* o = out.data<scalar_t>();
    // Each thread owns a range of columns and walks every id, in order: race-free and deterministic.
    parallel_for(D, std::max<int64_t>(16, 16384 / std::max<int64_t>(n, 1)), [&](int64_t c0, int64_t c1) {
      for (int64_t i = 0; i < n; ++i) {
        const scalar_t* src = pg + i * D;
        scalar_t* dst = o + id[i] * D;
        for (int64_t k = c0; k < c1; ++k) dst[k] += src[k];
      }
    });
  });
  return out;
}

}  // namespace ember::cpu
