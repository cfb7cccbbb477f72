#include "framework/train/optim/lr_schedule.h"

#include <algorithm>
#include <cmath>

#include "framework/core/error.h"

namespace ember::optim {

void LrSchedule::validate() const {
  EMBER_CHECK(std::isfinite(base_lr) && base_lr >= 0, "lr schedule: base_lr must be finite and >= 0, got ", base_lr);
  EMBER_CHECK(warmup_steps >= 0, "lr schedule: warmup_steps must be >= 0, got ", warmup_steps);
  if (kind == Kind::Cosine)
    EMBER_CHECK(total_steps > warmup_steps, "lr schedule: cosine needs total_steps (", total_steps,
                ") > warmup_steps (", warmup_steps, ")");
  if (kind == Kind::Step) {
    EMBER_CHECK(step_size > 0, "lr schedule: step_size must be > 0, got ", step_size);
    EMBER_CHECK(gamma > 0, "lr schedule: gamma must be > 0, got ", gamma);
  }
}

double LrSchedule::operator()(int64_t step) const {
  if (step < warmup_steps) return base_lr * double(step + 1) / double(warmup_steps);
  int64_t s = step - warmup_steps;
  switch (kind) {
    case Kind::Constant: return base_lr;
    case Kind::Cosine: {
      double progress = std::min(1.0, double(s) / double(total_steps - warmup_steps));
      return min_lr + (base_lr - min_lr) * 0.5 * (1.0 + std::cos(M_PI * progress));
    }
    case Kind::Step: return base_lr * std::pow(gamma, double(s / step_size));
  }
  return base_lr;
}

LrSchedule::Kind parse_lr_schedule(const std::string& s) {
  if (s == "constant") return LrSchedule::Kind::Constant;
  if (s == "cosine") return LrSchedule::Kind::Cosine;
  if (s == "step") return LrSchedule::Kind::Step;
  throw Error(str("unknown lr schedule '", s, "' (expected constant, cosine or step)"));
}

const char* name(LrSchedule::Kind k) {
  switch (k) {
    case LrSchedule::Kind::Constant: return "constant";
    case LrSchedule::Kind::Cosine: return "cosine";
    case LrSchedule::Kind::Step: return "step";
  }
  return "?";
}

}  // namespace ember::optim
