#include "models/gpt2/tokenizer.h"

#include <fstream>
#include <set>

#include "models/gpt2/gpt2_fixtures.h"
#include "test_util.h"

using ember::gpt2::Tokenizer;

namespace {

// A tiny vocabulary: the 256 byte symbols, a few merges, and end-of-text.
Tokenizer tiny() {
  const auto& b2u = ember::gpt2::byte_to_unicode();
  // merges: "h e", "l l", "he ll", "Ġ w" (Ġ is the space byte's symbol)
  const std::string sp = b2u[' '];
  std::string vocab = ember::gpt2::testing::byte_vocab("\"he\":256,\"ll\":257,\"hell\":258,\"" + sp + "w\":259,\"<|endoftext|>\":260");
  std::string merges = "#version: 0.2\nh e\nl l\nhe ll\n" + sp + " w\n";
  return Tokenizer::from_strings(vocab, merges);
}

const char* kRealDir = EMBER_SOURCE_DIR "/../shared/data/gpt2-bpe";

bool have_real() { return std::ifstream(std::string(kRealDir) + "/vocab.json").good(); }

}  // namespace

TEST(Gpt2Tokenizer, ByteTableIsABijectionOntoPrintableCharacters) {
  const auto& t = ember::gpt2::byte_to_unicode();
  std::set<std::string> seen(t.begin(), t.end());
  EXPECT_EQ(seen.size(), 256u);
  EXPECT_EQ(t['A'], "A");
  EXPECT_EQ(t[' '], "\xC4\xA0");  // U+0120, the familiar 'Ġ'
  EXPECT_EQ(t['\n'], "\xC4\x8A");  // U+010A, 'Ċ'
}

TEST(Gpt2Tokenizer, PretokenizeSplitsLikeGpt2) {
  Tokenizer t = tiny();
  EXPECT_EQ(t.pretokenize("Hello, world's 123   ét\xC3\xA9!!\n"), (std::vector<std::string>{
                                                                     "Hello", ",", " world", "'s", " 123", "  ", " ét\xC3\xA9", "!!", "\n"}));
}

TEST(Gpt2Tokenizer, MergesApplyByRank) {
  Tokenizer t = tiny();
  // "hello" -> h e l l o -> he l l o -> he ll o -> hell o
  std::vector<int64_t> ids = t.encode("hello");
  ASSERT_EQ(ids.size(), 2u);
  EXPECT_EQ(t.token(ids[0]), "hell");
  EXPECT_EQ(t.token(ids[1]), "o");
  std::vector<int64_t> w = t.encode(" w");
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(t.token(w[0]), " w");
  EXPECT_EQ(t.eot_id(), 260);
}

TEST(Gpt2Tokenizer, RoundTripsArbitraryBytesIncludingInvalidUtf8) {
  Tokenizer t = tiny();
  ember::Generator g(7);
  for (int trial = 0; trial < 50; ++trial) {
    std::string s;
    int n = int(g.next_u64() % 40);
    for (int i = 0; i < n; ++i) s += char(g.next_u64() % 256);
    EXPECT_EQ(t.decode(t.encode(s)), s) << "trial " << trial;
  }
  std::string text = "na\xC3\xAFve caf\xC3\xA9 \xE2\x82\xAC 5 \xF0\x9F\x98\x80 \xFF\xC3 end";
  EXPECT_EQ(t.decode(t.encode(text)), text);
}

TEST(Gpt2Tokenizer, BadFilesAndIdsRaiseErrors) {
  EXPECT_EMBER_ERROR(Tokenizer::from_strings("{not json", ""), "not valid JSON");
  EXPECT_EMBER_ERROR(Tokenizer::from_strings("{\"a\": -1}", ""), "non-negative");
  EXPECT_EMBER_ERROR(Tokenizer::from_strings("{\"a\": 0}", "a b c\n"), "merges.txt line 1");
  EXPECT_EMBER_ERROR(Tokenizer::from_dir("/nonexistent"), "cannot open");
  Tokenizer t = tiny();
  EXPECT_EMBER_ERROR(t.decode({99999}), "outside the vocabulary");
}

// Expected ids from an independent implementation (Hugging Face's GPT2Tokenizer on the same files).
TEST(Gpt2Tokenizer, MatchesTheReferenceOnTheRealVocabulary) {
  if (!have_real()) GTEST_SKIP() << "GPT-2 BPE files not found at " << kRealDir;
  Tokenizer t = Tokenizer::from_dir(kRealDir);
  EXPECT_EQ(t.vocab_size(), 50257);
  EXPECT_EQ(t.eot_id(), 50256);
  std::vector<std::pair<std::string, std::vector<int64_t>>> cases = {
      {"Hello world", {15496, 995}},
      {"Hello, world! It's 2026.", {15496, 11, 995, 0, 632, 338, 1160, 2075, 13}},
      {"  leading spaces and trailing  ", {220, 3756, 9029, 290, 25462, 220, 220}},
      {"na\xC3\xAFve caf\xC3\xA9 \xE2\x80\x94 \xE2\x82\xAC" "5 \xF0\x9F\x98\x80", {2616, 38776, 40304, 851, 10432, 20, 30325, 222}},
      {"I've we'll they'd you're", {40, 1053, 356, 1183, 484, 1549, 345, 821}},
      {"tab\there\nnewline\n\n", {8658, 197, 1456, 198, 3605, 1370, 628}},
      {"<|endoftext|>", {50256}},
      {"1234567 digits", {10163, 2231, 3134, 19561}},
      {"\xE6\x97\xA5\xE6\x9C\xAC\xE8\xAA\x9E\xE3\x81\xAE\xE3\x83\x86\xE3\x82\xAD\xE3\x82\xB9\xE3\x83\x88",
       {33768, 98, 17312, 105, 45739, 252, 5641, 24336, 25084, 43302}},
  };
  for (const auto& [text, ids] : cases) {
    EXPECT_EQ(t.encode(text), ids) << text;
    EXPECT_EQ(t.decode(ids), text);
  }
}
