#include "framework/train/io/safetensors.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>

#include "framework/train/nn/mlp.h"
#include "test_util.h"

using namespace ember;
using namespace ember::testing;

namespace {

std::string temp_path(const std::string& name) {
  return "/tmp/ember_st_test_" + std::to_string(::getpid()) + "_" + name;
}

// A file built by hand: header JSON text and data bytes, with the 8-byte length in front.
std::vector<uint8_t> make_file(const std::string& header, const std::vector<uint8_t>& data) {
  std::vector<uint8_t> out;
  out.reserve(8 + header.size() + data.size());
  uint64_t n = header.size();
  for (int i = 0; i < 8; ++i) out.push_back(uint8_t(n >> (8 * i)));
  for (char ch : header) out.push_back(uint8_t(ch));
  for (uint8_t b : data) out.push_back(b);
  return out;
}

template <class T>
std::vector<uint8_t> le_bytes(const std::vector<T>& v) {
  std::vector<uint8_t> b(v.size() * sizeof(T));
  std::memcpy(b.data(), v.data(), b.size());
  return b;
}

NamedTensors sample_tensors() {
  Generator g(3);
  return {{"weights", randn({3, 4}, DType::Float32, &g)},
          {"scale", full({}, 2.5, DType::Float64)},
          {"ids", from_vector(std::vector<int64_t>{5, -1, 1LL << 40}, {3})},
          {"empty", zeros({0, 7})},
          {"mask", from_vector(std::vector<bool>{true, false, false, true, true}, {5})},
          {"transposed", randn({4, 2}, DType::Float64, &g).t()}};  // written as its logical values
}

}  // namespace

TEST(Safetensors, RoundTripKeepsNamesShapesDtypesValuesAndMetadata) {
  NamedTensors in = sample_tensors();
  io::Metadata md = {{"format", "pt"}, {"note", "hello"}};
  std::vector<uint8_t> bytes = io::serialize_safetensors(in, md);
  uint64_t hlen = 0;
  for (int i = 7; i >= 0; --i) hlen = (hlen << 8) | bytes[size_t(i)];
  EXPECT_EQ((8 + hlen) % 8, 0u);  // the data section starts 8-aligned
  EXPECT_EQ(bytes[8], '{');
  io::Safetensors out = io::parse_safetensors(bytes);
  EXPECT_EQ(out.metadata, md);
  ASSERT_EQ(out.tensors.size(), in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    EXPECT_EQ(out.tensors[i].first, in[i].first);  // file order is the order written
    EXPECT_EQ(out.tensors[i].second.dtype(), in[i].second.dtype());
    EXPECT_TRUE(all_close(out.tensors[i].second, in[i].second, 0, 0)) << in[i].first;
  }
  // The same through a file.
  std::string path = temp_path("roundtrip.safetensors");
  io::save_safetensors(path, in, md);
  io::Safetensors f = io::load_safetensors(path);
  EXPECT_EQ(f.metadata, md);
  for (size_t i = 0; i < in.size(); ++i) EXPECT_TRUE(all_close(f.tensors[i].second, in[i].second, 0, 0));
  std::remove(path.c_str());
}

TEST(Safetensors, ReadsHandWrittenFilesIncludingHalfPrecision) {
  // F16: 1.0 = 0x3C00, -2.0 = 0xC000, 65504 = 0x7BFF, smallest subnormal 2^-24 = 0x0001.
  // BF16: 1.0 = 0x3F80, -0.5 = 0xBF00.
  std::vector<uint8_t> data = le_bytes<uint16_t>({0x3C00, 0xC000, 0x7BFF, 0x0001, 0x3F80, 0xBF00});
  std::vector<uint8_t> f64 = le_bytes<double>({0.125});
  data.insert(data.end(), f64.begin(), f64.end());
  std::string header = R"({"h":{"dtype":"F16","shape":[2,2],"data_offsets":[0,8]},)"
                       R"("b":{"dtype":"BF16","shape":[2],"data_offsets":[8,12]},)"
                       R"("d":{"dtype":"F64","shape":[],"data_offsets":[12,20]},"__metadata__":{"k":"v"}})";
  io::Safetensors st = io::parse_safetensors(make_file(header, data));
  ASSERT_EQ(st.tensors.size(), 3u);
  EXPECT_EQ(st.tensors[0].first, "h");  // sorted by offset, not by JSON key order
  EXPECT_EQ(st.tensors[0].second.dtype(), DType::Float16);  // kept as stored, two bytes each
  EXPECT_EQ(st.tensors[0].second.to_vector<double>(), (std::vector<double>{1.0, -2.0, 65504.0, std::ldexp(1.0, -24)}));
  EXPECT_EQ(st.tensors[1].second.dtype(), DType::BFloat16);
  EXPECT_EQ(st.tensors[1].second.to_vector<double>(), (std::vector<double>{1.0, -0.5}));
  EXPECT_EQ(st.tensors[2].second.item(), 0.125);
  EXPECT_EQ(st.metadata.at("k"), "v");
}

TEST(Safetensors, BoolIsOneBytePerElementAndAnyNonzeroByteIsTrue) {
  std::string header = R"({"m":{"dtype":"BOOL","shape":[2,2],"data_offsets":[0,4]}})";
  io::Safetensors st = io::parse_safetensors(make_file(header, {0, 1, 7, 0}));
  ASSERT_EQ(st.tensors.size(), 1u);
  EXPECT_EQ(st.tensors[0].second.dtype(), DType::Bool);
  EXPECT_EQ(st.tensors[0].second.to_vector<bool>(), (std::vector<bool>{false, true, true, false}));
  // Stored bools are exactly 0 or 1, so that a byte copy of them is a valid C++ bool again.
  EXPECT_EQ(static_cast<const uint8_t*>(st.tensors[0].second.raw_data())[2], 1);
  std::string path = temp_path("bool.safetensors");
  {
    std::vector<uint8_t> bytes = make_file(header, {0, 1, 7, 0});
    std::ofstream f(path, std::ios::binary);
    f.write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
  }
  Tensor m = io::load_safetensors(path).tensors.at(0).second;
  EXPECT_EQ(static_cast<const uint8_t*>(m.raw_data())[2], 1);
  EXPECT_EQ(m.to_vector<bool>(), (std::vector<bool>{false, true, true, false}));
  std::remove(path.c_str());
  std::vector<uint8_t> written = io::serialize_safetensors({{"m", st.tensors[0].second}});
  EXPECT_NE(std::string(written.begin(), written.end()).find(R"("dtype":"BOOL")"), std::string::npos);
}

TEST(Safetensors, RejectsInconsistentHeaders) {
  std::vector<uint8_t> d8(8, 0);
  auto bad = [&](const std::string& header, const std::string& needle, std::vector<uint8_t> data = {}) {
    if (data.empty()) data = d8;
    EXPECT_EMBER_ERROR(io::parse_safetensors(make_file(header, data), "f"), needle);
  };
  bad(R"([1,2])", "must start with '{'");
  bad(R"({"a":)", "not valid JSON");
  bad(R"({"a":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})", "needs 12 bytes but data_offsets span 8");
  bad(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,16]}})", "outside the data section of 8 bytes");
  bad(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[8,0]}})", "outside the data section");
  bad(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"b":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})",
      "overlaps");
  bad(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})", "bytes 0..4 of the data section belong to no tensor");
  bad(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})", "the tensors cover 4");
  bad(R"({"a":{"dtype":"U8","shape":[8],"data_offsets":[0,8]}})", "unsupported dtype 'U8'");
  bad(R"({"a":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}})", "non-negative integers");
  bad(R"({"a":{"dtype":"F32","shape":[2.5],"data_offsets":[0,8]}})", "non-negative integers");
  bad(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0]}})", "data_offsets' must be an array [begin, end]");
  bad(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8],"x":1}})", "unknown field 'x'");
  bad(R"({"a":{"shape":[2],"data_offsets":[0,8]}})", "'dtype' is missing");
  bad(R"({"a":[1]})", "must be an object");
  bad(R"({"__metadata__":{"k":1},"a":{"dtype":"F64","shape":[1],"data_offsets":[0,8]}})", "metadata 'k' must be a string");
  // A shape whose element count overflows 64 bits.
  bad(R"({"a":{"dtype":"F64","shape":[4294967296,4294967296,4294967296],"data_offsets":[0,8]}})", "needs too many bytes");
  // Header length larger than the file.
  std::vector<uint8_t> f = make_file(R"({})", {});
  f[0] = 200;
  EXPECT_EMBER_ERROR(io::parse_safetensors(f, "f"), "runs past the end");
  EXPECT_EMBER_ERROR(io::parse_safetensors({1, 2, 3}, "f"), "too short for the 8-byte header length");
  std::vector<uint8_t> big = make_file(R"({})", {});
  big[5] = 1;  // 2^40 bytes of header
  EXPECT_EMBER_ERROR(io::parse_safetensors(big, "f"), "exceeds");
}

TEST(Safetensors, TruncatedAndBitFlippedFilesThrowOrParseNeverCrash) {
  NamedTensors in = {{"w", from_vector(std::vector<float>{1, 2, 3, 4, 5, 6}, {2, 3})},
                     {"i", from_vector(std::vector<int64_t>{7}, {1})}};
  std::vector<uint8_t> bytes = io::serialize_safetensors(in, {{"m", "x"}});
  std::string path = temp_path("corrupt.safetensors");
  // Every truncation must fail, from memory and from a file (the two readers share the checks
  // but read the data differently).
  for (size_t len = 0; len < bytes.size(); ++len) {
    std::vector<uint8_t> t(bytes.begin(), bytes.begin() + long(len));
    EXPECT_THROW(io::parse_safetensors(t), Error) << "truncated to " << len;
    if (len % 7 == 0) {
      std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(t.data()), std::streamsize(t.size()));
      EXPECT_THROW(io::load_safetensors(path), Error) << "file truncated to " << len;
    }
  }
  // Every bit flip: ember::Error, or a file that still parses (a flip in the data, in a name or
  // in the metadata value). Any other exception or a crash fails the test.
  int threw = 0, parsed = 0;
  for (size_t i = 0; i < bytes.size(); ++i)
    for (int bit = 0; bit < 8; ++bit) {
      std::vector<uint8_t> f = bytes;
      f[i] ^= uint8_t(1 << bit);
      try {
        io::Safetensors st = io::parse_safetensors(f);
        for (auto& [n, t] : st.tensors) (void)t.to_vector<double>();  // touch every element
        ++parsed;
      } catch (const Error&) {
        ++threw;
      }
    }
  EXPECT_GT(threw, 0);
  EXPECT_GT(parsed, 0);
  std::remove(path.c_str());
}

TEST(Safetensors, AtomicWriteReplacesAndLeavesNoTemporary) {
  std::string path = temp_path("atomic.safetensors");
  io::save_safetensors(path, {{"a", zeros({2})}});
  io::save_safetensors(path, {{"b", ones({3})}});
  io::Safetensors st = io::load_safetensors(path);
  ASSERT_EQ(st.tensors.size(), 1u);
  EXPECT_EQ(st.tensors[0].first, "b");
  struct stat sb;
  EXPECT_NE(::stat((path + ".tmp." + std::to_string(::getpid())).c_str(), &sb), 0);
  std::remove(path.c_str());
  EXPECT_EMBER_ERROR(io::save_safetensors("/nonexistent/dir/x.safetensors", {{"a", zeros({1})}}), "cannot create");
  EXPECT_EMBER_ERROR(io::save_safetensors(path, {{"a", zeros({1})}, {"a", zeros({1})}}), "appears twice");
  EXPECT_EMBER_ERROR(io::load_safetensors("/nonexistent/x.safetensors"), "cannot open");
}

TEST(Safetensors, ModuleSaveLoadChecksEveryNameShapeAndDtype) {
  nn::MLPOptions o;
  o.seed = 1;
  auto a = nn::make_mlp({6, 5, 3}, o);
  o.seed = 2;
  auto b = nn::make_mlp({6, 5, 3}, o);
  std::string path = temp_path("module.safetensors");
  io::save_module(path, *a, {{"arch", "6-5-3"}});
  io::Metadata md = io::load_module(path, *b);
  EXPECT_EQ(md.at("arch"), "6-5-3");
  Tensor x = randn({4, 6});
  EXPECT_TRUE(all_close((*a)(x), (*b)(x), 0, 0));

  auto wider = nn::make_mlp({6, 7, 3});
  Tensor before = wider->parameters()[0].detach().clone();
  EXPECT_EMBER_ERROR(io::load_module(path, *wider), "parameter '0.weight' has shape [7, 6] in the model but [5, 6]");
  EXPECT_TRUE(all_close(wider->parameters()[0].detach(), before, 0, 0));  // unchanged after the failed load
  auto deeper = nn::make_mlp({6, 5, 3, 3});
  EXPECT_EMBER_ERROR(io::load_module(path, *deeper), "'4.weight' (shape [3, 3], float32) is missing");
  o.dtype = DType::Float64;
  auto f64 = nn::make_mlp({6, 5, 3}, o);
  EXPECT_EMBER_ERROR(io::load_module(path, *f64), "'0.weight' is float64 in the model but float32");
  std::remove(path.c_str());
}
