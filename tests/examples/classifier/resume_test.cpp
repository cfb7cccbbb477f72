// train_classifier --resume: the checkpoint's epoch, step and metrics are checked against the run.
#include "examples/classifier/resume.h"

#include "test_util.h"

using namespace ember;
using nlohmann::json;

namespace {

json row(int64_t epoch) {
  return {{"epoch", epoch},       {"step", epoch * 10},  {"lr", 0.001},       {"train_loss", 0.5},
          {"train_accuracy", 0.8}, {"val_loss", nullptr}, {"val_accuracy", 0.7}, {"epoch_seconds", 1.0},
          {"samples_per_second", 100.0}};
}

io::Metadata metadata(const std::string& epoch, const json& metrics) {
  return {{"epoch", epoch}, {"metrics", metrics.dump()}};
}

}  // namespace

TEST(ClassifierResume, AcceptsTheCheckpointOfAnEarlierEpoch) {
  examples::ResumeState r = examples::parse_resume(metadata("2", json::array({row(1), row(2)})), 20, 5, 10, "ck");
  EXPECT_EQ(r.epoch, 2);
  EXPECT_EQ(r.metrics.size(), 2u);
  // The last epoch of the run is accepted too: only the test evaluation remains.
  EXPECT_EQ(examples::parse_resume(metadata("1", json::array({row(1)})), 10, 1, 10, "ck").epoch, 1);
}

TEST(ClassifierResume, EpochsOutsideTheRunAreRefused) {
  EXPECT_EMBER_ERROR(examples::parse_resume(metadata("-3", json::array()), 0, 5, 10, "ck"),
                     "'ck' claims -3 completed epochs, expected 1 to 5 (this run's --epochs)");
  EXPECT_EMBER_ERROR(examples::parse_resume(metadata("1000", json::array()), 10000, 5, 10, "ck"), "claims 1000");
  EXPECT_EMBER_ERROR(examples::parse_resume(metadata("6", json::array()), 60, 5, 10, "ck"), "expected 1 to 5");
  EXPECT_EMBER_ERROR(examples::parse_resume(metadata("3abc", json::array()), 30, 5, 10, "ck"), "epoch '3abc', expected an integer");
  EXPECT_EMBER_ERROR(examples::parse_resume(metadata("", json::array()), 30, 5, 10, "ck"), "expected an integer");
  EXPECT_EMBER_ERROR(examples::parse_resume({{"metrics", "[]"}}, 0, 5, 10, "ck"), "has no 'epoch' entry");
}

TEST(ClassifierResume, StepsMustMatchTheEpochs) {
  EXPECT_EMBER_ERROR(examples::parse_resume(metadata("2", json::array({row(1), row(2)})), 21, 5, 10, "ck"),
                     "holds 21 steps for 2 epochs, expected 20");
}

TEST(ClassifierResume, MetricsOfTheWrongTypeAreRefusedNotThrownAsTypeErrors) {
  EXPECT_EMBER_ERROR(examples::parse_resume({{"epoch", "1"}, {"metrics", "[{"}}, 10, 5, 10, "ck"), "unreadable metrics");
  EXPECT_EMBER_ERROR(examples::parse_resume(metadata("1", json::object()), 10, 5, 10, "ck"), "array of one row per");
  EXPECT_EMBER_ERROR(examples::parse_resume(metadata("2", json::array({row(1)})), 20, 5, 10, "ck"), "array of one row per");
  json bad = row(1);
  bad["epoch_seconds"] = "fast";
  EXPECT_EMBER_ERROR(examples::parse_resume(metadata("1", json::array({bad})), 10, 5, 10, "ck"),
                     "row 1: 'epoch_seconds' is missing or not a number");
  bad = row(1);
  bad.erase("lr");
  EXPECT_EMBER_ERROR(examples::parse_resume(metadata("1", json::array({bad})), 10, 5, 10, "ck"), "'lr' is missing");
  bad = row(1);
  bad["train_loss"] = nullptr;  // only the validation columns may be null
  EXPECT_EMBER_ERROR(examples::parse_resume(metadata("1", json::array({bad})), 10, 5, 10, "ck"), "'train_loss'");
  EXPECT_EMBER_ERROR(examples::parse_resume(metadata("1", json::array({row(2)})), 10, 5, 10, "ck"), "is for epoch 2, expected 1");
  EXPECT_EMBER_ERROR(examples::parse_resume(metadata("1", json::array({5})), 10, 5, 10, "ck"), "row 1 is not an object");
}
