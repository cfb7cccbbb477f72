#include "ops/loss/cpu/cross_entropy_kernels.h"

#include <vector>

#include "framework/parallel.h"
#include "framework/rows.h"
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
