#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <set>

#include "framework/train/data/data_loader.h"
#include "framework/train/data/fashion_mnist.h"
#include "framework/train/data/idx.h"
#include "test_util.h"

using namespace ember;
using namespace ember::testing;
using ember::data::IdxArray;

namespace {

// A per-test scratch folder, removed with its files afterwards.
class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/ember_data_test_XXXXXX";
    path_ = ::mkdtemp(tmpl);
  }
  ~TempDir() {
    for (const std::string& f : files_) std::remove(f.c_str());
    ::rmdir(path_.c_str());
  }
  std::string file(const std::string& name) {
    files_.push_back(path_ + "/" + name);
    return files_.back();
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::vector<std::string> files_;
};

std::vector<uint8_t> read_bytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(f), {});
}
void write_bytes(const std::string& path, const std::vector<uint8_t>& b) {
  std::ofstream f(path, std::ios::binary);
  f.write(reinterpret_cast<const char*>(b.data()), std::streamsize(b.size()));
}

IdxArray small_images(uint64_t seed) {
  IdxArray a;
  a.type_code = 0x08;
  a.dims = {5, 3, 4};
  Generator g(seed);
  for (int i = 0; i < 60; ++i) a.payload.push_back(uint8_t(g.next_u64()));
  return a;
}

std::shared_ptr<data::TensorDataset> toy_dataset(int64_t n) {
  std::vector<float> x;
  std::vector<int64_t> y;
  for (int64_t i = 0; i < n; ++i) {
    x.push_back(float(i));
    x.push_back(float(-i));
    y.push_back(i);
  }
  return std::make_shared<data::TensorDataset>(from_vector(x, {n, 2}), from_vector(y, {n}));
}

}  // namespace

TEST(DataIdx, RoundTripGzipAndPlain) {
  TempDir dir;
  IdxArray a = small_images(1);
  for (bool gz : {true, false}) {
    std::string path = dir.file(gz ? "a.idx.gz" : "a.idx");
    data::write_idx(path, a, gz);
    IdxArray b = data::read_idx(path);
    EXPECT_EQ(b.type_code, 0x08);
    EXPECT_EQ(b.dims, a.dims);
    EXPECT_EQ(b.payload, a.payload);
    Tensor t = b.to_float(1.0 / 255);
    EXPECT_EQ(t.shape(), (Shape{5, 3, 4}));
    EXPECT_FLOAT_EQ(float(t.at({1, 2, 3})), float(a.payload[12 + 8 + 3]) / 255.0f);
  }
}

TEST(DataIdx, DecodesEveryElementType) {
  // Big-endian int16 -2, int32 70000, float32 1.5 (0x3FC00000), float64 -0.25 (0xBFD0000000000000).
  struct Case { uint8_t code; std::vector<uint8_t> bytes; double want; };
  for (const Case& c : std::vector<Case>{{0x09, {0xFE}, -2},
                                         {0x0B, {0xFF, 0xFE}, -2},
                                         {0x0C, {0x00, 0x01, 0x11, 0x70}, 70000},
                                         {0x0D, {0x3F, 0xC0, 0x00, 0x00}, 1.5},
                                         {0x0E, {0xBF, 0xD0, 0, 0, 0, 0, 0, 0}, -0.25}}) {
    std::vector<uint8_t> file = {0, 0, c.code, 1, 0, 0, 0, 1};
    for (uint8_t b : c.bytes) file.push_back(b);  // (push_back: GCC 12 misreports insert here)
    IdxArray a = data::parse_idx(file, "test");
    EXPECT_DOUBLE_EQ(a.to_float().item(), c.want) << int(c.code);
    if (c.code < 0x0D) EXPECT_EQ(a.to_int64().item(), c.want);
  }
}

TEST(DataIdx, RejectsMalformedHeaders) {
  EXPECT_EMBER_ERROR(data::parse_idx({0, 0}, "t"), "too short");
  EXPECT_EMBER_ERROR(data::parse_idx({1, 0, 8, 1, 0, 0, 0, 0}, "t"), "bad magic");
  EXPECT_EMBER_ERROR(data::parse_idx({0, 0, 7, 1, 0, 0, 0, 0}, "t"), "unknown element type");
  EXPECT_EMBER_ERROR(data::parse_idx({0, 0, 8, 0}, "t"), "zero dimensions");
  EXPECT_EMBER_ERROR(data::parse_idx({0, 0, 8, 3, 0, 0, 0, 1}, "t"), "too short for 3 dimension sizes");
  // Header says 2 elements, file holds 1; then 1 element but 2 bytes follow.
  EXPECT_EMBER_ERROR(data::parse_idx({0, 0, 8, 1, 0, 0, 0, 2, 7}, "t"), "holds only 1");
  EXPECT_EMBER_ERROR(data::parse_idx({0, 0, 8, 1, 0, 0, 0, 1, 7, 7}, "t"), "corrupt");
  // Dimensions whose product overflows 64 bits must not wrap around to a small size.
  std::vector<uint8_t> huge = {0, 0, 8, 3};
  for (int k = 0; k < 12; ++k) huge.push_back(0xFF);
  huge.push_back(1);
  EXPECT_EMBER_ERROR(data::parse_idx(huge, "t"), "truncated or corrupt");
}

TEST(DataIdx, TruncatedAndBitFlippedFilesThrowCleanly) {
  TempDir dir;
  std::string good = dir.file("good.gz");
  data::write_idx(good, small_images(2), true);
  std::vector<uint8_t> bytes = read_bytes(good);
  std::string bad = dir.file("bad.gz");
  int threw = 0, total = 0;
  // Every truncation: none may parse (a gzip stream cut short, or an IDX body too short).
  for (size_t len = 0; len < bytes.size(); ++len) {
    write_bytes(bad, std::vector<uint8_t>(bytes.begin(), bytes.begin() + long(len)));
    EXPECT_THROW(data::read_idx(bad), Error) << "truncated to " << len << " bytes";
  }
  // Single-bit flips: ember::Error or, where the flip hits a field gzip does not check
  // (header flags, mtime, OS byte), the original data; never a crash or another exception.
  for (size_t i = 0; i < bytes.size(); ++i)
    for (int bit : {0, 3, 7}) {  // three bits of every byte keep the test fast under ASan
      std::vector<uint8_t> f = bytes;
      f[i] ^= uint8_t(1 << bit);
      write_bytes(bad, f);
      ++total;
      try {
        IdxArray a = data::read_idx(bad);
        EXPECT_EQ(a.dims, small_images(2).dims) << "byte " << i << " bit " << bit;
      } catch (const Error&) {
        ++threw;
      }
    }
  EXPECT_GT(threw, total / 2);  // the CRC and length checks catch most flips
}

TEST(DataIdx, MissingFileNamesThePath) {
  EXPECT_EMBER_ERROR(data::read_idx("/nonexistent/x.gz"), "/nonexistent/x.gz");
}

TEST(DataFashionMnist, MissingFolderNamesTheAptPackage) {
  data::FashionMnistOptions o;
  o.dir = "/nonexistent/fashion";
  EXPECT_EMBER_ERROR(data::load_fashion_mnist(true, o), "dataset-fashion-mnist");
  EXPECT_FALSE(data::fashion_mnist_available(o.dir));
}

TEST(DataFashionMnist, ReadsTheRealTestSetWhenInstalled) {
  if (!data::fashion_mnist_available()) GTEST_SKIP() << "Fashion-MNIST not installed (apt-get install dataset-fashion-mnist)";
  data::FashionMnistOptions o;
  o.normalize = false;
  o.limit = 20;
  auto test = data::load_fashion_mnist(false, o);
  EXPECT_EQ(test->size(), 20);
  EXPECT_EQ(test->inputs().shape(), (Shape{20, 784}));
  // The published test set starts with an ankle boot (9), a pullover (2) and two trousers (1).
  EXPECT_EQ(test->targets().slice(0, 0, 4).to_vector<int64_t>(), (std::vector<int64_t>{9, 2, 1, 1}));
  std::vector<float> x = test->inputs().to_vector<float>();
  float lo = 1, hi = 0;
  for (float v : x) lo = std::min(lo, v), hi = std::max(hi, v);
  EXPECT_EQ(lo, 0.0f);
  EXPECT_EQ(hi, 1.0f);
}

TEST(DataLoader, BatchesCoverEveryExampleOnce) {
  auto ds = toy_dataset(10);
  data::DataLoader keep(ds, {4, true, false, 7});
  EXPECT_EQ(keep.num_batches(), 3);
  std::multiset<int64_t> seen;
  int64_t sizes = 0;
  for (const data::Batch& b : keep.epoch(0)) {
    sizes += b.targets.numel();
    EXPECT_EQ(b.inputs.size(1), 2);
    for (int64_t i = 0; i < b.targets.numel(); ++i) {
      int64_t y = int64_t(b.targets.at({i}));
      seen.insert(y);
      EXPECT_EQ(b.inputs.at({i, 0}), double(y));  // the input row travels with its target
      EXPECT_EQ(b.inputs.at({i, 1}), -double(y));
    }
  }
  EXPECT_EQ(sizes, 10);
  EXPECT_EQ(seen.size(), 10u);
  EXPECT_EQ(std::set<int64_t>(seen.begin(), seen.end()).size(), 10u);

  data::DataLoader drop(ds, {4, false, true, 0});
  EXPECT_EQ(drop.num_batches(), 2);
  int count = 0;
  for (const data::Batch& b : drop.epoch(0)) {
    EXPECT_EQ(b.targets.numel(), 4);
    EXPECT_EQ(b.targets.at({0}), double(4 * count));  // unshuffled: in order
    ++count;
  }
  EXPECT_EQ(count, 2);
  EXPECT_EMBER_ERROR(data::DataLoader(ds, {0}), "batch_size must be positive");
}

TEST(DataLoader, SeededShufflingIsDeterministicPerEpoch) {
  auto ds = toy_dataset(50);
  data::DataLoader a(ds, {8, true, false, 3}), b(ds, {8, true, false, 3}), c(ds, {8, true, false, 4});
  EXPECT_EQ(a.order(0), b.order(0));
  EXPECT_EQ(a.order(5), b.order(5));  // epoch 5 without iterating epochs 0..4 (resume)
  EXPECT_NE(a.order(0), a.order(1));
  EXPECT_NE(a.order(0), c.order(0));
  std::vector<int64_t> sorted = a.order(2);
  std::sort(sorted.begin(), sorted.end());
  for (int64_t i = 0; i < 50; ++i) EXPECT_EQ(sorted[size_t(i)], i);
  // The batches themselves repeat.
  std::vector<double> first, second;
  for (const data::Batch& x : a.epoch(1)) for (double v : x.targets.to_vector<double>()) first.push_back(v);
  for (const data::Batch& x : b.epoch(1)) for (double v : x.targets.to_vector<double>()) second.push_back(v);
  EXPECT_EQ(first, second);
}

TEST(DataLoader, RandomSplitIsDisjointAndComplete) {
  auto ds = toy_dataset(30);
  auto [train, val] = data::random_split(ds, 24, 11);
  EXPECT_EQ(train->size(), 24);
  EXPECT_EQ(val->size(), 6);
  std::set<int64_t> all(train->indices().begin(), train->indices().end());
  for (int64_t k : val->indices()) EXPECT_TRUE(all.insert(k).second) << "index " << k << " in both";
  EXPECT_EQ(all.size(), 30u);
  auto [t2, v2] = data::random_split(ds, 24, 11);
  EXPECT_EQ(t2->indices(), train->indices());
  data::Batch b = val->get_batch({0, 5});
  EXPECT_EQ(b.targets.at({1}), double(val->indices()[5]));
  EXPECT_EMBER_ERROR(val->get_batch({6}), "out of range");
  EXPECT_EMBER_ERROR(data::random_split(ds, 31, 0), "out of range");
  EXPECT_EMBER_ERROR(data::TensorDataset(zeros({3, 2}), zeros({4})), "3 rows but targets have 4");
}
