// GPT-2 config.json from outside: every size is bounded by a named cap, every field's type is
// checked, and load_model compares the config with the weights' header before it allocates.
#include <filesystem>
#include <fstream>

#include "framework/train/io/safetensors.h"
#include "models/gpt2/checkpoint.h"
#include "models/gpt2/config.h"
#include "models/gpt2/gpt2_fixtures.h"
#include "test_util.h"

using namespace ember;
using namespace ember::gpt2;
using ember::gpt2::testing::tiny_config;

namespace {


std::string json_with(const std::string& key, const std::string& value) {
  return "{\"n_layer\": 2, \"n_head\": 1, \"n_embd\": 16, \"vocab_size\": 37, \"n_positions\": 24, \"" + key +
         "\": " + value + "}";
}

std::string saved_tiny_model(const std::string& name) {
  std::string dir = ::testing::TempDir() + "/ember_gpt2_limits_" + name;
  std::filesystem::remove_all(dir);
  save_model(GPT2(tiny_config(), 3), dir);
  return dir;
}

}  // namespace

TEST(Gpt2ConfigLimits, EverySizeIsBoundedByItsNamedCap) {
  EXPECT_EMBER_ERROR(Config::from_json_string(json_with("n_embd", "4611686018427387904")),
                     "n_embd is 4611686018427387904, expected 1 to 65536");
  // The largest accepted value of each, and the smallest refused.
  const std::pair<const char*, int64_t> caps[] = {{"n_layer", kMaxLayers},       {"n_head", kMaxHeads},
                                                  {"vocab_size", kMaxVocab},     {"n_positions", kMaxPositions},
                                                  {"n_ctx", kMaxPositions}};
  for (auto [key, cap] : caps) {
    std::string k = key;
    if (k != "n_head") EXPECT_NO_THROW(Config::from_json_string(json_with(k, std::to_string(cap)))) << k;
    EXPECT_EMBER_ERROR(Config::from_json_string(json_with(k, std::to_string(cap + 1))), k + " is " + std::to_string(cap + 1));
    EXPECT_EMBER_ERROR(Config::from_json_string(json_with(k, "0")), k + " is 0, expected 1 to");
    EXPECT_EMBER_ERROR(Config::from_json_string(json_with(k, "-3")), k + " is -3");
  }
  EXPECT_EQ(Config::from_json_string("{\"n_embd\": 65536, \"n_head\": 1024}").n_embd, kMaxEmbd);
  EXPECT_EMBER_ERROR(Config::from_json_string("{\"n_embd\": 65537, \"n_head\": 1}"), "n_embd is 65537");
  // 2^64 - 1 does not fit int64: it must not wrap to -1 and pass some other check.
  EXPECT_EMBER_ERROR(Config::from_json_string(json_with("n_layer", "18446744073709551615")), "n_layer is");
  // n_ctx alone sets the context length.
  EXPECT_EQ(Config::from_json_string("{\"n_ctx\": 77}").n_positions, 77);
}

TEST(Gpt2ConfigLimits, FieldTypesAreCheckedBeforeUse) {
  EXPECT_EMBER_ERROR(Config::from_json_string(json_with("n_embd", "\"768\"")), "'n_embd' must be an integer, got \"768\"");
  EXPECT_EMBER_ERROR(Config::from_json_string(json_with("n_head", "1.5")), "'n_head' must be an integer");
  EXPECT_EMBER_ERROR(Config::from_json_string(json_with("n_ctx", "null")), "'n_ctx' must be an integer");
  EXPECT_EMBER_ERROR(Config::from_json_string(json_with("layer_norm_epsilon", "[1]")), "must be a number");
  EXPECT_EMBER_ERROR(Config::from_json_string(json_with("layer_norm_epsilon", "-1")), "layer_norm_epsilon is -1");
  EXPECT_EMBER_ERROR(Config::from_json_string("[1, 2]"), "must hold an object");
  EXPECT_EMBER_ERROR(Config::from_json_string("{\"n_embd\": "), "not valid JSON");
}

TEST(Gpt2ConfigLimits, LoadModelChecksTheConfigAgainstTheWeightsBeforeAllocating) {
  std::string dir = saved_tiny_model("mismatch");
  // Within every cap, but ~800 GB of parameters: building it first would exhaust memory.
  std::ofstream(dir + "/config.json") << "{\"n_layer\": 1000, \"n_head\": 32, \"n_embd\": 4096}";
  reset_peak_memory();
  const int64_t before = memory_stats().current_bytes;
  EXPECT_EMBER_ERROR(load_model(dir), "declares vocab_size and n_embd giving wte.weight the shape [50257, 4096]");
  EXPECT_LT(memory_stats().peak_bytes - before, int64_t(1) << 20);  // only the header was read
  std::ofstream(dir + "/config.json") << "{\"n_layer\": 3, \"n_head\": 2, \"n_embd\": 16, \"vocab_size\": 37, \"n_positions\": 24}";
  EXPECT_EMBER_ERROR(load_model(dir), "declares n_layer 3 but");
  std::ofstream(dir + "/config.json") << "{\"n_layer\": 2, \"n_head\": 2, \"n_embd\": 16, \"vocab_size\": 37, \"n_positions\": 25}";
  EXPECT_EMBER_ERROR(load_model(dir), "n_positions and n_embd giving wpe.weight the shape [25, 16]");
  std::ofstream(dir + "/config.json") << "{\"n_embd\": 4611686018427387904, \"n_head\": 1}";
  EXPECT_EMBER_ERROR(load_model(dir), "n_embd is 4611686018427387904");
  std::ofstream(dir + "/config.json") << tiny_config().to_json_string();
  EXPECT_EQ(load_model(dir)->config().n_layer, 2);  // the matching config still loads
}

TEST(Gpt2ConfigLimits, HeaderReaderValidatesWithoutReadingData) {
  std::string dir = saved_tiny_model("header");
  io::Metadata md;
  std::vector<io::TensorInfo> h = io::read_safetensors_header(dir + "/model.safetensors", &md);
  ASSERT_FALSE(h.empty());
  bool saw_wte = false;
  for (const io::TensorInfo& t : h)
    if (t.name == "wte.weight") {
      saw_wte = true;
      EXPECT_EQ(t.shape, (Shape{37, 16}));
      EXPECT_EQ(t.dtype, "F32");
    }
  EXPECT_TRUE(saw_wte);
  EXPECT_EMBER_ERROR(io::read_safetensors_header(dir + "/nope.safetensors"), "cannot open");
}

// A config for another model or another activation is refused by name instead of loading as GPT-2.
TEST(Gpt2ConfigLimits, OtherModelTypesAndActivationsAreRefused) {
  EXPECT_NO_THROW(Config::from_json_string(json_with("model_type", "\"gpt2\"")));
  EXPECT_NO_THROW(Config::from_json_string(json_with("activation_function", "\"gelu_new\"")));
  EXPECT_NO_THROW(Config::from_json_string(json_with("activation_function", "\"gelu_pytorch_tanh\"")));
  EXPECT_EMBER_ERROR(Config::from_json_string(json_with("model_type", "\"bert\"")),
                     "'model_type' is 'bert'; Ember's GPT-2 supports only 'gpt2'");
  EXPECT_EMBER_ERROR(Config::from_json_string(json_with("activation_function", "\"relu\"")),
                     "'activation_function' is 'relu'; Ember's GPT-2 supports only 'gelu_new'");
  // "gelu" (Hugging Face's exact erf GELU, nanoGPT's nn.GELU()) is built as that, not as the tanh form.
  EXPECT_TRUE(Config::from_json_string(json_with("activation_function", "\"gelu\"")).exact_gelu());
  EXPECT_FALSE(Config::from_json_string(json_with("activation_function", "\"gelu_new\"")).exact_gelu());
  EXPECT_EMBER_ERROR(Config::from_json_string(json_with("activation_function", "\"gelu_fast\"")),
                     "'activation_function' is 'gelu_fast'");
  EXPECT_EMBER_ERROR(Config::from_json_string(json_with("activation_function", "5")),
                     "'activation_function' must be a string, got 5");
  EXPECT_EMBER_ERROR(Config::from_json_string(json_with("model_type", "7")), "'model_type' must be a string, got 7");
  // What Ember writes, it reads back.
  EXPECT_EQ(Config::from_json_string(tiny_config().to_json_string()).n_embd, tiny_config().n_embd);
}

// "bias" and "activation_function" round-trip through config.json; a config without "bias" (every
// Hugging Face GPT-2) has biases; a non-bool "bias" and an unknown activation are refused.
TEST(Gpt2ConfigLimits, BiasAndActivationRoundTrip) {
  EXPECT_TRUE(Config::from_json_string(json_with("n_ctx", "24")).bias);
  EXPECT_EQ(Config::from_json_string(json_with("n_ctx", "24")).activation_function, "gelu_new");
  for (bool bias : {false, true})
    for (const char* act : {"gelu", "gelu_new", "gelu_pytorch_tanh"}) {
      Config c = tiny_config();
      c.bias = bias;
      c.activation_function = act;
      Config back = Config::from_json_string(c.to_json_string());
      EXPECT_EQ(back.bias, bias) << act;
      EXPECT_EQ(back.activation_function, act);
      EXPECT_EQ(back.n_embd, c.n_embd);
    }
  EXPECT_FALSE(Config::from_json_string(json_with("bias", "false")).bias);
  EXPECT_EMBER_ERROR(Config::from_json_string(json_with("bias", "\"yes\"")), "'bias' must be true or false, got \"yes\"");
  EXPECT_EMBER_ERROR(Config::from_json_string(json_with("bias", "1")), "'bias' must be true or false, got 1");
  EXPECT_EMBER_ERROR(Config::from_json_string(json_with("activation_function", "\"relu\"")), "supports only");
  // A Config built in code is checked too: the model refuses an activation it cannot compute.
  Config c = tiny_config();
  c.activation_function = "relu";
  EXPECT_EMBER_ERROR(c.validate(), "activation_function is 'relu'");
  EXPECT_EMBER_ERROR(GPT2 model(c), "activation_function is 'relu'");
}
