// The one progress bar of the examples (examples/common/progress_bar.h): on a stream that is not
// a terminal (a log file, a pipe) it prints only the finished line, with no carriage returns or
// escape codes; disabled, it prints nothing.
#include "examples/common/progress_bar.h"

#include <cstdio>
#include <string>

#include "test_util.h"

using ember::examples::format_duration;
using ember::examples::ProgressBar;

namespace {

// Everything written to `f` so far.
std::string contents(std::FILE* f) {
  std::fflush(f);
  long n = std::ftell(f);
  std::string s(size_t(n), '\0');
  std::rewind(f);
  size_t got = std::fread(s.data(), 1, s.size(), f);
  s.resize(got);
  std::fseek(f, 0, SEEK_END);
  return s;
}

}  // namespace

TEST(ProgressBar, OnANonTerminalStreamOnlyTheFinishedLineIsPrinted) {
  std::FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  {
    ProgressBar bar("epoch 1/2", 10, true, f);
    for (int i = 1; i <= 10; ++i) bar.update(i, i * 32, "loss 0.5");
    EXPECT_EQ(contents(f), "");  // no redraws into a log
    bar.finish("loss 0.25");
  }
  std::string out = contents(f);
  EXPECT_EQ(out.rfind("epoch 1/2 [########################] 10/10 loss 0.25 | ", 0), 0u) << out;
  EXPECT_NE(out.find(" samples/s | took "), std::string::npos) << out;
  EXPECT_EQ(out.back(), '\n');
  EXPECT_EQ(out.find('\n'), out.size() - 1) << "one line: " << out;
  EXPECT_EQ(out.find('\r'), std::string::npos);
  EXPECT_EQ(out.find('\033'), std::string::npos);
  std::fclose(f);
}

TEST(ProgressBar, StepCountsUnitsAndFinishKeepsTheLastStatus) {
  std::FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  ProgressBar bar("cases", 4, true, f, "cases");
  bar.step("n=64");
  bar.step("n=128");
  bar.step("n=256");
  bar.finish();
  std::string out = contents(f);
  // 3 of 4: 18 of the 24 cells filled.
  EXPECT_EQ(out.rfind("cases [##################......] 3/4 n=256 | ", 0), 0u) << out;
  EXPECT_NE(out.find(" cases/s | took "), std::string::npos) << out;
  std::fclose(f);
}

TEST(ProgressBar, DisabledPrintsNothing) {
  std::FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  ProgressBar bar("quiet", 3, false, f);
  bar.step("a");
  bar.update(3, 3, "b");
  bar.finish("done");
  EXPECT_EQ(contents(f), "");
  std::fclose(f);
}

TEST(ProgressBar, DurationsReadAsSecondsMinutesOrHours) {
  EXPECT_EQ(format_duration(12.34), "12.3s");
  EXPECT_EQ(format_duration(65), "1m05s");
  EXPECT_EQ(format_duration(3 * 3600 + 7 * 60), "3h07m");
  EXPECT_EQ(format_duration(-1), "?");
  EXPECT_EQ(format_duration(NAN), "?");
}
