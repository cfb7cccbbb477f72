// Reading back what train_classifier stored in its checkpoint's metadata ("epoch", "metrics"):
// a file from outside (or from another run) is checked against this run before training goes on.
#pragma once
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>

#include "framework/core/error.h"
#include "framework/train/io/safetensors.h"

namespace ember::examples {

struct ResumeState {
  int64_t epoch = 0;  // epochs completed
  nlohmann::json metrics = nlohmann::json::array();  // one row per completed epoch
};

// The metrics row keys train_classifier writes; val_* may also be null (no validation split).
inline const char* const kMetricKeys[] = {"epoch",          "step",     "lr",         "train_loss",
                                          "train_accuracy", "val_loss", "val_accuracy", "epoch_seconds",
                                          "samples_per_second"};

// `what` names the checkpoint; `epochs` is this run's --epochs, `steps_per_epoch` its batches per epoch and
// `step` the checkpoint's update count. Every mismatch is an ember::Error saying what was expected.
inline ResumeState parse_resume(const io::Metadata& md, int64_t step, int64_t epochs, int64_t steps_per_epoch,
                                const std::string& what) {
  auto get = [&](const char* key) -> const std::string& {
    auto it = md.find(key);
    EMBER_CHECK(it != md.end(), "--resume: '", what, "' has no '", key,
                "' entry; pass a checkpoint written by train_classifier");
    return it->second;
  };
  ResumeState r;
  const std::string& e = get("epoch");
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(e.c_str(), &end, 10);
  EMBER_CHECK(!e.empty() && end == e.c_str() + e.size() && errno == 0, "--resume: '", what, "' has epoch '", e,
              "', expected an integer");
  EMBER_CHECK(v >= 1 && v <= epochs, "--resume: '", what, "' claims ", v, " completed epochs, expected 1 to ", epochs,
              " (this run's --epochs)");
  r.epoch = v;
  EMBER_CHECK(step == r.epoch * steps_per_epoch, "--resume: '", what, "' holds ", step, " steps for ", r.epoch,
              " epochs, expected ", r.epoch * steps_per_epoch, " (", steps_per_epoch,
              " per epoch: was it written with another --batch-size, --limit or --val-size?)");
  try {
    r.metrics = nlohmann::json::parse(get("metrics"));
  } catch (const nlohmann::json::exception& ex) {
    throw Error(str("--resume: '", what, "' has unreadable metrics (", ex.what(), ")"));
  }
  EMBER_CHECK(r.metrics.is_array() && int64_t(r.metrics.size()) == r.epoch, "--resume: '", what,
              "' metrics must be an array of one row per completed epoch (", r.epoch, ")");
  for (size_t i = 0; i < r.metrics.size(); ++i) {
    const nlohmann::json& row = r.metrics[i];
    EMBER_CHECK(row.is_object(), "--resume: '", what, "' metrics row ", i + 1, " is not an object");
    for (const char* key : kMetricKeys) {
      const bool nullable = std::string(key).rfind("val_", 0) == 0;
      EMBER_CHECK(row.contains(key) && (row[key].is_number() || (nullable && row[key].is_null())), "--resume: '", what,
                  "' metrics row ", i + 1, ": '", key, "' is missing or not a number");
    }
    EMBER_CHECK(row["epoch"].is_number_integer() && row["epoch"].get<int64_t>() == int64_t(i) + 1, "--resume: '", what,
                "' metrics row ", i + 1, " is for epoch ", row["epoch"].dump(), ", expected ", i + 1);
  }
  return r;
}

}  // namespace ember::examples
