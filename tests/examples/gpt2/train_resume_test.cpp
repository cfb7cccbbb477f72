// gpt2 train --resume: the checkpoint's settings, step, log and seconds are checked against the run.
#include "examples/gpt2/train_resume.h"

#include "test_util.h"

using namespace ember;
using ember::gpt2::cli::parse_train_resume;
using nlohmann::json;

namespace {

const json kSettings = {{"--seed", 3}, {"--steps", 25}, {"--batch", 8}, {"--lr", 0.003}, {"--data", "abc:10+2"}};

// The log of a run checkpointed after `step` steps with --eval-every 10 and --steps 25.
json log_until(int64_t step) {
  json log = json::array({{{"step", 0}, {"val_loss", 5.5}, {"seconds", 0.0}}});
  for (int64_t s = 10; s <= step; s += 10) log.push_back({{"step", s}, {"train_loss", 4.0}, {"val_loss", 4.1}, {"seconds", 1.0}});
  if (step == 25) log.push_back({{"step", 25}, {"train_loss", 3.0}, {"val_loss", 3.1}, {"seconds", 2.0}});
  return log;
}

io::Metadata metadata(int64_t step, const json& settings = kSettings) {
  return {{"settings", settings.dump()}, {"log", log_until(step).dump()}, {"seconds", "1.5"}};
}

}  // namespace

TEST(Gpt2TrainResume, AcceptsCheckpointsAtEvaluationsAndTheLastStep) {
  gpt2::cli::TrainResume r = parse_train_resume(metadata(20), 20, kSettings, 25, 10, "ck");
  EXPECT_EQ(r.log.size(), 3u);
  EXPECT_EQ(r.val_loss, 4.1);
  EXPECT_EQ(r.seconds, 1.5);
  // The last step, not a multiple of --eval-every: only the final evaluation remains.
  r = parse_train_resume(metadata(25), 25, kSettings, 25, 10, "ck");
  EXPECT_EQ(r.log.size(), 4u);
  EXPECT_EQ(r.val_loss, 3.1);
  // The saved settings come back through JSON text: integers and doubles compare exactly.
  EXPECT_EQ(gpt2::cli::log_rows(25, 10), 4);
  EXPECT_EQ(gpt2::cli::log_rows(20, 10), 3);
}

TEST(Gpt2TrainResume, OtherSettingsAreRefusedNamingTheFlag) {
  json other = kSettings;
  other["--batch"] = 16;
  EXPECT_EMBER_ERROR(parse_train_resume(metadata(20, other), 20, kSettings, 25, 10, "ck"),
                     "'ck' was written with --batch 16, this run has 8 (expected the same settings)");
  other = kSettings;
  other["--lr"] = 0.0030000000000000005;  // one ulp away still changes every update
  EXPECT_EMBER_ERROR(parse_train_resume(metadata(20, other), 20, kSettings, 25, 10, "ck"), "--lr");
  other = kSettings;
  other["--data"] = "abd:10+2";
  EXPECT_EMBER_ERROR(parse_train_resume(metadata(20, other), 20, kSettings, 25, 10, "ck"), "--data \"abd:10+2\"");
  other = kSettings;
  other.erase("--seed");
  EXPECT_EMBER_ERROR(parse_train_resume(metadata(20, other), 20, kSettings, 25, 10, "ck"), "does not record --seed");
  // A checkpoint of a run with a non-default structure, resumed by a run left at the defaults.
  other = kSettings;
  other["--gelu"] = "exact";
  EXPECT_EMBER_ERROR(parse_train_resume(metadata(20, other), 20, kSettings, 25, 10, "ck"),
                     "'ck' was written with --gelu \"exact\", this run leaves it at its default");
  EXPECT_NO_THROW(parse_train_resume(metadata(20, other), 20, other, 25, 10, "ck"));
}

TEST(Gpt2TrainResume, StepsOutsideTheRunOrBetweenEvaluationsAreRefused) {
  EXPECT_EMBER_ERROR(parse_train_resume(metadata(20), 0, kSettings, 25, 10, "ck"), "holds 0 steps, expected 1 to 25");
  EXPECT_EMBER_ERROR(parse_train_resume(metadata(20), -3, kSettings, 25, 10, "ck"), "holds -3 steps");
  EXPECT_EMBER_ERROR(parse_train_resume(metadata(20), 1000, kSettings, 25, 10, "ck"), "holds 1000 steps");
  EXPECT_EMBER_ERROR(parse_train_resume(metadata(20), 15, kSettings, 25, 10, "ck"),
                     "holds 15 steps, expected a multiple of --eval-every 10 or --steps 25");
  // The log must be the one of that step: one row per evaluation, ending at it.
  EXPECT_EMBER_ERROR(parse_train_resume(metadata(10), 20, kSettings, 25, 10, "ck"),
                     "'log' must be an array of 3 evaluations for 20 steps");
}

TEST(Gpt2TrainResume, MalformedMetadataIsAnErrorNotACrash) {
  io::Metadata md = metadata(20);
  md["log"] = "[{\"step\": \"10\"}]";
  EXPECT_EMBER_ERROR(parse_train_resume(md, 20, kSettings, 25, 10, "ck"), "'log' must be an array of 3");
  json log = log_until(20);
  log[1]["step"] = "10";
  md["log"] = log.dump();
  EXPECT_EMBER_ERROR(parse_train_resume(md, 20, kSettings, 25, 10, "ck"), "log row 1 has no integer 'step'");
  log = log_until(20);
  log[1]["step"] = 11;
  md["log"] = log.dump();
  EXPECT_EMBER_ERROR(parse_train_resume(md, 20, kSettings, 25, 10, "ck"), "log row 1 is for step 11, expected 10");
  log = log_until(20);
  log[2]["val_loss"] = nullptr;
  md["log"] = log.dump();
  EXPECT_EMBER_ERROR(parse_train_resume(md, 20, kSettings, 25, 10, "ck"), "log row 2: 'val_loss' is missing or not a number");
  md = metadata(20);
  md["log"] = "{not json";
  EXPECT_EMBER_ERROR(parse_train_resume(md, 20, kSettings, 25, 10, "ck"), "unreadable 'log' entry");
  md = metadata(20);
  md["settings"] = "[1, 2]";
  EXPECT_EMBER_ERROR(parse_train_resume(md, 20, kSettings, 25, 10, "ck"), "'settings' is not an object");
  for (const char* s : {"-1", "nan", "1e999", "", "2s"}) {
    md = metadata(20);
    md["seconds"] = s;
    SCOPED_TRACE(s);
    EXPECT_EMBER_ERROR(parse_train_resume(md, 20, kSettings, 25, 10, "ck"), "expected a number >= 0");
  }
  md = metadata(20);
  md.erase("seconds");
  EXPECT_EMBER_ERROR(parse_train_resume(md, 20, kSettings, 25, 10, "ck"), "has no 'seconds' entry");
}
