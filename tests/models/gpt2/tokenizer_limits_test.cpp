// The tokenizer on hostile input: text packed with special tokens encodes in linear memory and
// round-trips exactly; vocabularies with two tokens under one id, gaps, or fewer ids than the
// model's vocab_size are refused when loaded.
#include <string>

#include "models/gpt2/tokenizer.h"
#include "models/gpt2/gpt2_fixtures.h"
#include "test_util.h"

using ember::gpt2::Tokenizer;

using ember::gpt2::testing::byte_vocab;

namespace {


}  // namespace

TEST(Gpt2TokenizerLimits, ManySpecialTokensEncodeIterativelyAndRoundTrip) {
  Tokenizer t = Tokenizer::from_strings(byte_vocab("\"<|endoftext|>\":256"), "");
  std::string text;
  int64_t specials = 0;
  while (text.size() < 300 * 1000) {
    text += "<|endoftext|>";
    ++specials;
    if (specials % 3 == 0) text += "x";  // ordinary text between some of them
  }
  std::vector<int64_t> ids = t.encode(text);
  EXPECT_EQ(int64_t(ids.size()), specials + specials / 3);
  int64_t eots = 0;
  for (int64_t id : ids) eots += id == t.eot_id();
  EXPECT_EQ(eots, specials);
  EXPECT_EQ(t.decode(ids), text);
  // A partial special token is ordinary text.
  EXPECT_EQ(t.decode(t.encode("<|endoftext|<|endoftext|>>")), "<|endoftext|<|endoftext|>>");
  EXPECT_EQ(t.encode("<|endoftext|>").size(), 1u);
  EXPECT_TRUE(t.encode("").empty());
}

TEST(Gpt2TokenizerLimits, TwoTokensUnderOneIdAreRefused) {
  EXPECT_EMBER_ERROR(Tokenizer::from_strings(byte_vocab("\"ab\":256,\"cd\":256"), ""), "to id 256 (expected one token per id)");
  EXPECT_EMBER_ERROR(Tokenizer::from_strings(byte_vocab("\"ab\":65"), ""), "maps both");
}

TEST(Gpt2TokenizerLimits, JsonTypesAreCheckedBeforeUse) {
  EXPECT_EMBER_ERROR(Tokenizer::from_strings(byte_vocab("\"ab\":\"256\""), ""), "id of 'ab' is not a non-negative integer");
  EXPECT_EMBER_ERROR(Tokenizer::from_strings(byte_vocab("\"ab\":2.5"), ""), "not a non-negative integer");
  EXPECT_EMBER_ERROR(Tokenizer::from_strings(byte_vocab("\"ab\":-1"), ""), "not a non-negative integer");
  EXPECT_EMBER_ERROR(Tokenizer::from_strings("[1,2]", ""), "non-empty object");
  EXPECT_EMBER_ERROR(Tokenizer::from_strings("{\"a\":", ""), "not valid JSON");
}

TEST(Gpt2TokenizerLimits, VocabularyMustCoverTheModelsIds) {
  Tokenizer t = Tokenizer::from_strings(byte_vocab("\"<|endoftext|>\":256"), "");
  EXPECT_NO_THROW(t.check_covers(257, "m"));
  EXPECT_NO_THROW(t.check_covers(100, "m"));
  EXPECT_EMBER_ERROR(t.check_covers(258, "m"), "m: vocab.json has ids up to 256 but the model's vocab_size is 258");
  // A gap: id 257 is missing between 256 and 258.
  Tokenizer gap = Tokenizer::from_strings(byte_vocab("\"ab\":256,\"cd\":258"), "");
  EXPECT_EMBER_ERROR(gap.check_covers(259, "m"), "no token for id 257");
  EXPECT_EMBER_ERROR(gap.token(257), "not in vocab.json");
  EXPECT_EQ(gap.token(258), "cd");
}
