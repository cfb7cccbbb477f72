// The shared harness of examples/common/bench.h: the median every benchmark reports, the repeat
// loop behind it, the one JSON result writer (atomic; a bad path is an ember::Error), and the
// machine facts every report prints (CPU name, load average).
#include "examples/common/bench.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

#include "test_util.h"

using namespace ember;
namespace fs = std::filesystem;

namespace {

class ScratchDir {
 public:
  ScratchDir() {
    char tmpl[] = "/tmp/ember_bench_test_XXXXXX";
    path_ = ::mkdtemp(tmpl);
  }
  ~ScratchDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }
  // Every entry of the folder, so that a test sees a temporary file left behind.
  std::vector<std::string> entries() const {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(path_)) out.push_back(e.path().filename().string());
    return out;
  }

 private:
  std::string path_;
};

std::string read_all(const std::string& path) {
  std::ifstream f(path);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

}  // namespace

TEST(BenchMedian, OddCountIsTheMiddleOfTheSortedSamples) {
  EXPECT_DOUBLE_EQ(bench::median({5.0, 1.0, 3.0}), 3.0);
  EXPECT_DOUBLE_EQ(bench::median({9.0, 2.0, 7.0, 4.0, 8.0}), 7.0);
  EXPECT_DOUBLE_EQ(bench::median({0.25}), 0.25);
}

TEST(BenchMedian, EvenCountIsTheMeanOfTheTwoMiddleSamples) {
  EXPECT_DOUBLE_EQ(bench::median({4.0, 1.0, 3.0, 2.0}), 2.5);  // not 3 (the upper middle) nor 2
  EXPECT_DOUBLE_EQ(bench::median({10.0, 0.5}), 5.25);
}

TEST(BenchMedian, EmptyIsZeroAndAnOutlierDoesNotMoveIt) {
  EXPECT_DOUBLE_EQ(bench::median({}), 0.0);
  EXPECT_DOUBLE_EQ(bench::median({1.0, 1.1, 1e9}), 1.1);
}

TEST(BenchMeasure, RunsWarmupPlusExactlyTheRepeatsWithoutATimeLimit) {
  int calls = 0;
  bench::Timing t = bench::measure([&] { ++calls; }, {3, 7, 7, std::numeric_limits<double>::infinity()});
  EXPECT_EQ(calls, 3 + 7);
  EXPECT_EQ(t.repeats, 7);
  ASSERT_EQ(t.samples_s.size(), 7u);
  EXPECT_DOUBLE_EQ(t.median_s, bench::median(t.samples_s));
  EXPECT_LE(t.min_s, t.median_s);
  EXPECT_LE(t.median_s, t.max_s);
}

TEST(BenchMeasure, NoRepeatsTimesNothing) {
  int calls = 0;
  bench::Timing t = bench::measure([&] { ++calls; }, {1, 0, 0, 1.0});
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(t.repeats, 0);
  EXPECT_DOUBLE_EQ(t.median_s, 0.0);
}

TEST(BenchMeasureInterleaved, RunsOneOfEachPerRoundInAlternatingOrder) {
  std::string order;
  std::vector<std::function<void()>> fs = {[&] { order += 'a'; }, [&] { order += 'b'; }, [&] { order += 'c'; }};
  std::vector<bench::Timing> ts =
      bench::measure_interleaved(fs, {1, 4, 4, std::numeric_limits<double>::infinity()});
  EXPECT_EQ(order, "abc" "abc" "cba" "abc" "cba");  // the warm-up, then rounds 0-3
  ASSERT_EQ(ts.size(), 3u);
  for (const bench::Timing& t : ts) {
    EXPECT_EQ(t.repeats, 4);
    EXPECT_EQ(t.samples_s.size(), 4u);
  }
}

TEST(BenchPairedSpeedup, IsTheMedianOfThePerRoundRatios) {
  bench::Timing fast, slow;
  // The machine slows down 3x after round 2; a runs at twice b's speed in every round.
  fast.samples_s = {1, 1, 3, 3, 3};
  slow.samples_s = {2, 2, 6, 6, 6};
  EXPECT_DOUBLE_EQ(bench::paired_speedup(fast, slow), 2.0);
  EXPECT_DOUBLE_EQ(bench::paired_speedup(slow, fast), 0.5);
  // Where the two medians fall in different phases, their ratio says 1, the rounds say 2.
  fast.samples_s = {1, 1, 3, 3, 3};
  slow.samples_s = {2, 2, 2, 6, 6};
  EXPECT_DOUBLE_EQ(bench::median(slow.samples_s) / bench::median(fast.samples_s), 2.0 / 3.0);
  EXPECT_DOUBLE_EQ(bench::paired_speedup(fast, slow), 2.0);
}

TEST(BenchPairedSpeedup, UnpairedOrEmptyTimingsGiveZero) {
  bench::Timing a, b;
  EXPECT_DOUBLE_EQ(bench::paired_speedup(a, b), 0.0);
  a.samples_s = {1, 2, 3};
  b.samples_s = {1, 2};
  EXPECT_DOUBLE_EQ(bench::paired_speedup(a, b), 0.0);
}

TEST(BenchWriteJson, WritesTheDocumentWithItsIndentAndANewline) {
  ScratchDir dir;
  nlohmann::json doc = {{"median_ms", 1.5}, {"rows", {1, 2, 3}}};
  bench::write_json(dir / "r.json", doc);
  EXPECT_EQ(read_all(dir / "r.json"), doc.dump(2) + "\n");
  bench::write_json(dir / "r1.json", doc, 1);  // bench_sparse's indent
  EXPECT_EQ(read_all(dir / "r1.json"), doc.dump(1) + "\n");
  EXPECT_EQ(nlohmann::json::parse(read_all(dir / "r1.json")), doc);
}

TEST(BenchWriteJson, ReplacesALongerFileWhole) {
  ScratchDir dir;
  nlohmann::json big = nlohmann::json::array();
  for (int i = 0; i < 1000; ++i) big.push_back(i);
  bench::write_json(dir / "r.json", big);
  bench::write_json(dir / "r.json", {{"a", 1}});
  EXPECT_EQ(read_all(dir / "r.json"), nlohmann::json({{"a", 1}}).dump(2) + "\n");
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"r.json"});
}

TEST(BenchWriteJson, AMissingFolderIsAnErrorNamingThePath) {
  const std::string path = "/nonexistent_ember_folder/r.json";
  EXPECT_EMBER_ERROR(bench::write_json(path, nlohmann::json::object()), "cannot write '" + path + "'");
  EXPECT_FALSE(fs::exists(path));
  EXPECT_EMBER_ERROR(bench::write_json("", nlohmann::json::object()), "empty path");
}

TEST(BenchWriteJson, AFailedWriteLeavesNoPartialOrTemporaryFile) {
  ScratchDir dir;
  // The target is a folder: the temporary file is written, the rename onto it fails.
  fs::create_directory(dir / "taken");
  EXPECT_EMBER_ERROR(bench::write_json(dir / "taken", {{"a", 1}}), "cannot write '" + (dir / "taken") + "'");
  EXPECT_TRUE(fs::is_directory(dir / "taken"));
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"taken"});  // no "taken.tmp.<pid>"
  // An existing result survives a failed write to a sibling untouched.
  bench::write_json(dir / "old.json", {{"kept", true}});
  const std::string before = read_all(dir / "old.json");
  EXPECT_EMBER_ERROR(bench::write_json(dir / "missing/old.json", {{"kept", false}}), "cannot write");
  EXPECT_EQ(read_all(dir / "old.json"), before);
}

TEST(BenchMachine, CpuNameIsTheModelNameLineWithoutItsKey) {
  std::ifstream f("/proc/cpuinfo");
  std::string line, expected = "unknown CPU";
  while (std::getline(f, line))
    if (line.rfind("model name", 0) == 0) {
      expected = line.substr(line.find(':') + 1);
      expected.erase(0, expected.find_first_not_of(" \t"));
      break;
    }
  EXPECT_EQ(bench::cpu_name(), expected);
  EXPECT_FALSE(bench::cpu_name().empty());
}

TEST(BenchMachine, LoadAverageIsThreeNonNegativeFigures) {
  const std::string load = bench::load_average();
  if (!std::ifstream("/proc/loadavg")) {
    EXPECT_EQ(load, "unknown");
    return;
  }
  std::istringstream in(load);
  double figure = -1;
  int count = 0;
  while (in >> figure) {
    EXPECT_GE(figure, 0.0) << load;
    ++count;
  }
  EXPECT_EQ(count, 3) << load;
  EXPECT_TRUE(in.eof()) << "not all numbers: '" << load << "'";
}
