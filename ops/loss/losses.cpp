// Losses as compositions of differentiable ops: each is a few elementwise ops and a reduction,
// which is what a fused kernel would save passes over; the elementwise ones are memory-bound
// anyway, and this way grad of grad and forward mode come for free.
#include "ops/loss/losses.h"

#include "ops/elementwise/elementwise.h"
#include "ops/loss/cross_entropy.h"
#include "ops/reduce/reduce.h"
#include "ops/select/indexing.h"
#include "ops/softmax/softmax.h"

namespace ember {
namespace {

void check_pair(const char* op, const Tensor& input, const Tensor& target) {
  EMBER_CHECK(input.defined() && target.defined(), op, ": input or target is undefined");
  EMBER_CHECK(is_floating(input.dtype()), op, ": input must be float32 or float64, got ", input.dtype(),
              to_string(input.shape()));
  EMBER_CHECK(input.shape() == target.shape(), op, ": input of shape ", to_string(input.shape()),
              " and target of shape ", to_string(target.shape()), " must match");
  EMBER_CHECK(input.dtype() == target.dtype(), op, ": input is ", input.dtype(), " but target is ", target.dtype());
}

Tensor reduce(const Tensor& elementwise, Reduction r) {
  switch (r) {
    case Reduction::None: return elementwise;
    case Reduction::Sum: return sum(elementwise);
    case Reduction::Mean: return mean(elementwise);
  }
  return elementwise;
}

}  // namespace

Tensor mse_loss(const Tensor& input, const Tensor& target, Reduction reduction) {
  check_pair("mse_loss", input, target);
  return reduce(square(input - target), reduction);
}

Tensor l1_loss(const Tensor& input, const Tensor& target, Reduction reduction) {
  check_pair("l1_loss", input, target);
  return reduce(abs(input - target), reduction);
}

Tensor smooth_l1_loss(const Tensor& input, const Tensor& target, Reduction reduction, double beta) {
  check_pair("smooth_l1_loss", input, target);
  EMBER_CHECK(beta > 0, "smooth_l1_loss: beta must be positive, got ", beta);
  Tensor d = input - target, a = abs(d);
  return reduce(where(lt(a, scalar_like(a, beta)), (0.5 / beta) * (d * d), a - 0.5 * beta), reduction);
}

Tensor nll_loss(const Tensor& log_probs, const Tensor& target, Reduction reduction, int64_t ignore_index) {
  EMBER_CHECK(log_probs.defined() && target.defined(), "nll_loss: input or target is undefined");
  EMBER_CHECK(is_floating(log_probs.dtype()), "nll_loss: input must be float32 or float64, got ", log_probs.dtype());
  EMBER_CHECK(target.dtype() == DType::Int64, "nll_loss: target must be int64 class indices, got ", target.dtype(),
              to_string(target.shape()));
  EMBER_CHECK((log_probs.dim() == 2 && target.dim() == 1 && target.size(0) == log_probs.size(0)) ||
                  (log_probs.dim() == 1 && target.dim() == 0),
              "nll_loss: input of shape ", to_string(log_probs.shape()), " needs (N, C) with target (N), or (C) with a 0-d target; got target ",
              to_string(target.shape()));
  Tensor lp = log_probs.dim() == 1 ? log_probs.unsqueeze(0) : log_probs;
  Tensor t = target.detach().reshape({lp.size(0), 1});
  int64_t classes = lp.size(1);
  // Ignored targets read class 0 and are masked out afterwards; every other must be a class.
  Tensor ignored = t.eq(double(ignore_index));
  Tensor safe = where(ignored, scalar_like(t, 0.0), t);
  // The check reads the targets on the host (one value per row: a small copy from a GPU).
  Tensor tc = t.device() == Device::CPU ? t.contiguous() : t.to(Device::CPU);
  const int64_t* ti = tc.data<int64_t>();
  for (int64_t i = 0; i < t.numel(); ++i)
    EMBER_CHECK(ti[i] == ignore_index || (ti[i] >= 0 && ti[i] < classes), "nll_loss: target ", ti[i],
                " is out of range for ", classes, " classes (input shape ", to_string(log_probs.shape()), ")");
  Tensor keep = cast(logical_not(ignored), lp.dtype());
  Tensor per = -(gather(lp, 1, safe) * keep).reshape({lp.size(0)});
  if (log_probs.dim() == 1) per = per.reshape({});
  if (reduction == Reduction::Mean) return sum(per) / sum(keep);  // all ignored: 0/0 = NaN, as PyTorch
  return reduce(per, reduction);
}

Tensor binary_cross_entropy(const Tensor& probs, const Tensor& target, Reduction reduction) {
  check_pair("binary_cross_entropy", probs, target);
  // On a GPU the range is counted there first; the host copy that names the bad value is made
  // only when there is one.
  bool check_on_host = probs.device() == Device::CPU;
  if (!check_on_host) {
    Tensor p = probs.detach();
    check_on_host = sum(logical_not(logical_and(p.ge(0.0), p.le(1.0)))).to(Device::CPU).item() > 0;
  }
  Tensor pc = check_on_host ? probs.detach().to(Device::CPU).contiguous() : Tensor();
  if (check_on_host) EMBER_DISPATCH_FLOAT(pc.dtype(), "binary_cross_entropy", [&] {
    const scalar_t* p = pc.data<scalar_t>();
    for (int64_t i = 0; i < pc.numel(); ++i)
      EMBER_CHECK(p[i] >= 0 && p[i] <= 1, "binary_cross_entropy: input ", double(p[i]),
                  " is not a probability in [0, 1] (shape ", to_string(probs.shape()), ")");
  });
  Tensor log_p = clamp_min(log(probs), -100.0), log_q = clamp_min(log(1.0 - probs), -100.0);
  return reduce(-(target * log_p + (1.0 - target) * log_q), reduction);
}

Tensor binary_cross_entropy_with_logits(const Tensor& logits, const Tensor& target, Reduction reduction) {
  check_pair("binary_cross_entropy_with_logits", logits, target);
  return reduce(softplus(logits) - logits * target, reduction);
}

Tensor cross_entropy(const Tensor& logits, const Tensor& targets, const CrossEntropyOptions& o) {
  EMBER_CHECK(o.label_smoothing >= 0 && o.label_smoothing <= 1, "cross_entropy: label_smoothing must lie in [0, 1], got ",
              o.label_smoothing);
  EMBER_CHECK(logits.defined() && targets.defined(), "cross_entropy: logits or targets are undefined");
  bool any_ignored = false;
  if (targets.dtype() == DType::Int64 && targets.device() == Device::CPU) {
    Tensor tc = targets.contiguous();
    const int64_t* t = tc.data<int64_t>();
    for (int64_t i = 0; i < tc.numel() && !any_ignored; ++i) any_ignored = t[i] == o.ignore_index;
  } else if (targets.dtype() == DType::Int64 && targets.numel() > 0) {
    any_ignored = sum(targets.detach().eq(double(o.ignore_index))).to(Device::CPU).item() > 0;
  }
  // The fused primitive covers the plain mean.
  if (o.reduction == Reduction::Mean && o.label_smoothing == 0 && !any_ignored) return cross_entropy(logits, targets);
  EMBER_CHECK(logits.dim() >= 1 && logits.size(-1) > 0, "cross_entropy: logits need a non-empty class dim, got shape ",
              to_string(logits.shape()));
  Shape lead(logits.shape().begin(), logits.shape().end() - 1);
  EMBER_CHECK(targets.shape() == lead, "cross_entropy: logits ", to_string(logits.shape()), " need targets of shape ",
              to_string(lead), ", got ", to_string(targets.shape()));
  int64_t classes = logits.size(-1), n = numel(lead);
  Tensor lsm = log_softmax(logits.reshape({n, classes}), -1);
  Tensor t = targets.reshape({n});
  Tensor nll = nll_loss(lsm, t, Reduction::None, o.ignore_index);
  Tensor keep = cast(t.detach().ne(double(o.ignore_index)), lsm.dtype());
  Tensor per = nll;
  if (o.label_smoothing > 0) {
    // The uniform part of the target: -(1/C) sum_c log p_c, on the kept rows only.
    Tensor uniform = -(sum(lsm, {1}) / double(classes)) * keep;
    per = (1.0 - o.label_smoothing) * nll + o.label_smoothing * uniform;
  }
  switch (o.reduction) {
    case Reduction::None: return per.reshape(lead);
    case Reduction::Sum: return sum(per);
    case Reduction::Mean: return sum(per) / sum(keep);
  }
  return per;
}

}  // namespace ember
