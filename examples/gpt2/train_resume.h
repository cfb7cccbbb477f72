// What `gpt2 train` keeps in its checkpoint's metadata besides the model and the optimizer, and
// the checks a resumed run makes on it: the settings the run was started with, its evaluation log
// and the seconds it has trained. A checkpoint is written after every evaluation (every
// --eval-every steps and at the last step), where the training-loss window is empty, so the log,
// the step and the seed are the whole state: the batch stream is replayed from the seed.
#pragma once
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>

#include "framework/core/error.h"
#include "framework/train/io/safetensors.h"

namespace ember::gpt2::cli {

// FNV-1a over the corpus: a resume on other text is refused instead of silently training on it.
inline std::string text_fingerprint(const std::string& train, const std::string& val) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (const std::string* s : {&train, &val})
    for (unsigned char c : *s) h = (h ^ c) * 0x100000001b3ULL;
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", (unsigned long long)h);
  return str(buf, ":", train.size(), "+", val.size());
}

// Log rows a run holds after `step` steps: the evaluation before training, one per --eval-every
// steps, and one at the last step when it is not a multiple of --eval-every.
inline int64_t log_rows(int64_t step, int64_t eval_every) {
  return 1 + step / eval_every + (step % eval_every != 0 ? 1 : 0);
}

struct TrainResume {
  nlohmann::json log;     // the evaluation log up to the checkpoint
  double seconds = 0;     // training seconds before the checkpoint (over every earlier invocation)
  double val_loss = 0;    // the last evaluation's
};

namespace detail {
inline const std::string& metadata_entry(const io::Metadata& md, const char* key, const std::string& what) {
  auto it = md.find(key);
  EMBER_CHECK(it != md.end(), "--resume: '", what, "' has no '", key, "' entry; pass a checkpoint written by gpt2 train");
  return it->second;
}
inline nlohmann::json metadata_json(const io::Metadata& md, const char* key, const std::string& what) {
  try {
    return nlohmann::json::parse(metadata_entry(md, key, what));
  } catch (const nlohmann::json::exception& e) {
    throw Error(str("--resume: '", what, "' has an unreadable '", key, "' entry (", e.what(), ")"));
  }
}
}  // namespace detail

// `settings` maps flag names ("--batch") to this run's values; every one must equal the
// checkpoint's, and the checkpoint may name no other, since each changes what the remaining steps
// compute. Checked on the file's header before the checkpoint is loaded, so that a checkpoint of
// other settings is refused by name, not by an optimizer state that does not fit.
inline void check_resume_settings(const io::Metadata& md, const nlohmann::json& settings, const std::string& what) {
  const nlohmann::json saved = detail::metadata_json(md, "settings", what);
  EMBER_CHECK(saved.is_object(), "--resume: '", what, "': 'settings' is not an object");
  for (auto it = settings.begin(); it != settings.end(); ++it) {
    EMBER_CHECK(saved.contains(it.key()), "--resume: '", what, "' does not record ", it.key(),
                " (expected a checkpoint of this version of gpt2 train)");
    EMBER_CHECK(saved[it.key()] == it.value(), "--resume: '", what, "' was written with ", it.key(), " ",
                saved[it.key()].dump(), ", this run has ", it.value().dump(), " (expected the same settings)");
  }
  // A flag named only away from its default (--precision bf16, --bias false, --gelu exact) is
  // absent from a default run's settings: the checkpoint naming it is refused too.
  for (auto it = saved.begin(); it != saved.end(); ++it)
    EMBER_CHECK(settings.contains(it.key()), "--resume: '", what, "' was written with ", it.key(), " ",
                it.value().dump(), ", this run leaves it at its default (expected the same settings)");
}

// check_resume_settings, then the checkpoint's step (its update count) against this run's `steps`
// and `eval_every`, and its log and seconds. Every mismatch is an ember::Error.
inline TrainResume parse_train_resume(const io::Metadata& md, int64_t step, const nlohmann::json& settings,
                                      int64_t steps, int64_t eval_every, const std::string& what) {
  auto get = [&](const char* key) -> const std::string& { return detail::metadata_entry(md, key, what); };
  auto parse = [&](const char* key) { return detail::metadata_json(md, key, what); };
  check_resume_settings(md, settings, what);
  EMBER_CHECK(step >= 1 && step <= steps, "--resume: '", what, "' holds ", step, " steps, expected 1 to ", steps,
              " (this run's --steps)");
  EMBER_CHECK(step % eval_every == 0 || step == steps, "--resume: '", what, "' holds ", step,
              " steps, expected a multiple of --eval-every ", eval_every, " or --steps ", steps,
              " (checkpoints are written after evaluations)");

  TrainResume r;
  const std::string& sec = get("seconds");
  char* end = nullptr;
  errno = 0;
  r.seconds = std::strtod(sec.c_str(), &end);
  EMBER_CHECK(!sec.empty() && end == sec.c_str() + sec.size() && errno == 0 && std::isfinite(r.seconds) &&
                  r.seconds >= 0,
              "--resume: '", what, "' has seconds '", sec, "', expected a number >= 0");

  r.log = parse("log");
  const int64_t rows = log_rows(step, eval_every);
  EMBER_CHECK(r.log.is_array() && int64_t(r.log.size()) == rows, "--resume: '", what,
              "': 'log' must be an array of ", rows, " evaluations for ", step, " steps");
  int64_t prev = -1;
  for (size_t i = 0; i < r.log.size(); ++i) {
    const nlohmann::json& row = r.log[i];
    EMBER_CHECK(row.is_object() && row.contains("step") && row["step"].is_number_integer(), "--resume: '", what,
                "' log row ", i, " has no integer 'step'");
    const int64_t s = row["step"].get<int64_t>();
    const int64_t expected = i + 1 == r.log.size() ? step : std::min<int64_t>(int64_t(i) * eval_every, step);
    EMBER_CHECK(s == expected && s > prev, "--resume: '", what, "' log row ", i, " is for step ", s, ", expected ",
                expected);
    prev = s;
    for (const char* key : {"val_loss", "seconds", "train_loss"}) {
      if (i == 0 && std::string(key) == "train_loss") continue;  // nothing trained before the first evaluation
      EMBER_CHECK(row.contains(key) && row[key].is_number(), "--resume: '", what, "' log row ", i, ": '", key,
                  "' is missing or not a number");
    }
  }
  r.val_loss = r.log.back()["val_loss"].get<double>();
  return r;
}

}  // namespace ember::gpt2::cli
