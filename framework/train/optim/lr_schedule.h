// Learning-rate schedules: the rate as a function of the (0-based) update number, with an optional
// linear warm-up from base_lr / warmup_steps up to base_lr over the first warmup_steps updates.
#pragma once
#include <cstdint>
#include <string>

namespace ember::optim {

struct LrSchedule {
  enum class Kind { Constant, Cosine, Step };
  Kind kind = Kind::Constant;
  double base_lr = 1e-3;
  int64_t warmup_steps = 0;
  int64_t total_steps = 0;  // Cosine: anneals from base_lr to min_lr over [warmup_steps, total_steps)
  double min_lr = 0.0;
  int64_t step_size = 1;    // Step: multiply by gamma every step_size updates after warm-up
  double gamma = 0.1;

  double operator()(int64_t step) const;
  void validate() const;  // ember::Error on inconsistent settings
};

LrSchedule::Kind parse_lr_schedule(const std::string& s);  // "constant", "cosine", "step"
const char* name(LrSchedule::Kind k);

}  // namespace ember::optim
