#include "ops/loss/cpu/cross_entropy_kernels.h"

#include <vector>

#include "framework/core/parallel.h"
#include "framework/core/rows.h"
#include "ops/softmax/cpu/online_max_sum.h"

namespace ember::cpu {
namespace {

// The targets as a contiguous int64 array after checking each lies in [0, C).
Tensor checked_targets(const Tensor& targets, int64_t classes, const char* op) {
  Tensor t = targets.contiguous();
  const int64_t* p = t.data<int64_t>();
  for (int64_t i = 0; i < t.numel(); ++i)
    EMBER_CHECK(p[i] >= 0 && p[i] < classes, op, ": target ", p[i], " at flat index ", i,
                " is out of range for ", classes, " classes (expected 0 to ", classes - 1, ")");
  return t;
}

// dst = softmax(row) * scale, then scale taken off at the target: one exp per element.
template <class T>
void backward_rows(const Tensor& logits, const int64_t* tg, double scale, T* po) {
  const int64_t classes = logits.size(-1);
  Rows in = rows_along(logits, logits.dim() - 1);
  const T* px = static_cast<const T*>(logits.impl()->storage->data());
  parallel_for(in.count, std::max<int64_t>(1, 8192 / classes), [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) {
      const T* row = px + in.offset(r);
      T* dst = po + r * classes;
      MaxSum<T> ms = online_max_sum(row, classes, in.stride);
      const T c = T(scale / double(ms.sum));
      bool done = false;
      if constexpr (std::is_same_v<T, float>) {
        if (in.stride == 1 && have_simd_exp() && std::isfinite(ms.max)) {
          exp_scale_simd(row, classes, ms.max, c, dst);
          done = true;
        }
      }
      if (!done)
        for (int64_t k = 0; k < classes; ++k) dst[k] = std::exp(row[k * in.stride] - ms.max) * c;
      dst[tg[r]] -= T(scale);
    }
  });
}

}  // namespace

Tensor cross_entropy(const Tensor& logits, const Tensor& targets) {
  int64_t classes = logits.size(-1);
  Tensor t = checked_targets(targets, classes, "cross_entropy");
  Rows in = rows_along(logits, logits.dim() - 1);
  std::vector<double> row_loss(size_t(in.count));
  const int64_t* tg = t.data<int64_t>();
  EMBER_DISPATCH_FLOAT(logits.dtype(), "cross_entropy", [&] {
    const scalar_t* px = static_cast<const scalar_t*>(logits.impl()->storage->data());
    parallel_for(in.count, std::max<int64_t>(1, 8192 / classes), [&](int64_t b, int64_t e) {
      for (int64_t r = b; r < e; ++r) {
        const scalar_t* row = px + in.offset(r);
        row_loss[size_t(r)] = double(online_max_sum(row, in.len, in.stride).log_sum_exp()) - double(row[tg[r] * in.stride]);
      }
    });
  });
  double total = 0;
  for (double l : row_loss) total += l;
  return scalar(total / double(in.count), logits.dtype());
}

Tensor cross_entropy_backward(const Tensor& logits, const Tensor& targets, double scale) {
  const int64_t classes = logits.size(-1);
  Tensor t = checked_targets(targets, classes, "cross_entropy backward");
  Tensor out = empty(logits.shape(), logits.dtype());
  EMBER_DISPATCH_FLOAT(logits.dtype(), "cross_entropy backward", [&] {
    backward_rows<scalar_t>(logits, t.data<int64_t>(), scale, out.data<scalar_t>());
  });
  return out;
}

Tensor one_hot(const Tensor& targets, int64_t classes, DType dtype) {
  Tensor t = checked_targets(targets, classes, "one_hot");
  Shape s = t.shape();
  s.push_back(classes);
  Tensor out = zeros(s, dtype);
  const int64_t* tg = t.data<int64_t>();
  EMBER_DISPATCH_FLOAT(dtype, "one_hot", [&] {
    scalar_t* o = out.data<scalar_t>();
    for (int64_t i = 0; i < t.numel(); ++i) o[i * classes + tg[i]] = 1;
  });
  return out;
}

}  // namespace ember::cpu
