#include "models/gpt2/config.h"

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "framework/core/error.h"

namespace ember::gpt2 {

namespace {
const char* const kActivations = "'gelu_new' or 'gelu_pytorch_tanh' (GELU with the tanh approximation) or 'gelu' (exact)";
bool known_activation(const std::string& a) { return a == "gelu_new" || a == "gelu_pytorch_tanh" || a == "gelu"; }

void check_size(const char* key, int64_t v, int64_t cap) {
  EMBER_CHECK(v > 0 && v <= cap, "gpt2 config: ", key, " is ", v, ", expected 1 to ", cap);
}
}  // namespace

void Config::validate() const {
  check_size("n_layer", n_layer, kMaxLayers);
  check_size("n_head", n_head, kMaxHeads);
  check_size("n_embd", n_embd, kMaxEmbd);
  check_size("vocab_size", vocab_size, kMaxVocab);
  check_size("n_positions", n_positions, kMaxPositions);
  EMBER_CHECK(n_embd % n_head == 0, "gpt2 config: n_embd ", n_embd, " is not divisible by n_head ", n_head);
  EMBER_CHECK(layer_norm_epsilon > 0 && layer_norm_epsilon < 1, "gpt2 config: layer_norm_epsilon is ",
              layer_norm_epsilon, ", expected a small positive number such as 1e-5");
  EMBER_CHECK(known_activation(activation_function), "gpt2 config: activation_function is '", activation_function,
              "'; Ember's GPT-2 supports only ", kActivations);
}

Config Config::preset(const std::string& name) {
  Config c;
  if (name == "gpt2") return c;
  if (name == "gpt2-medium") c.n_layer = 24, c.n_head = 16, c.n_embd = 1024;
  else if (name == "gpt2-large") c.n_layer = 36, c.n_head = 20, c.n_embd = 1280;
  else if (name == "gpt2-xl") c.n_layer = 48, c.n_head = 25, c.n_embd = 1600;
  else throw Error(str("gpt2 config: unknown preset '", name, "' (expected gpt2, gpt2-medium, gpt2-large or gpt2-xl)"));
  return c;
}

Config Config::from_json_string(const std::string& text) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const std::exception& e) {
    throw Error(str("gpt2 config: config.json is not valid JSON: ", e.what()));
  }
  EMBER_CHECK(j.is_object(), "gpt2 config: config.json must hold an object");
  // Keys that choose a different model: refused unless they name the one Ember builds, so that
  // a BERT or a ReLU config does not load as GPT-2 (absent keys mean GPT-2's defaults).
  auto expect_one_of = [&](const char* key, std::initializer_list<const char*> allowed, const char* what) {
    if (!j.contains(key)) return;
    EMBER_CHECK(j[key].is_string(), "gpt2 config: '", key, "' must be a string, got ", j[key].dump());
    const std::string v = j[key].get<std::string>();
    for (const char* a : allowed)
      if (v == a) return;
    throw Error(str("gpt2 config: '", key, "' is '", v, "'; Ember's GPT-2 supports only ", what));
  };
  expect_one_of("model_type", {"gpt2"}, "'gpt2'");
  expect_one_of("activation_function", {"gelu_new", "gelu_pytorch_tanh", "gelu"}, kActivations);
  Config c;
  if (j.contains("activation_function")) c.activation_function = j["activation_function"].get<std::string>();
  // Not a Hugging Face GPT-2 key (their GPT-2 always has biases): absent means true.
  if (j.contains("bias")) {
    EMBER_CHECK(j["bias"].is_boolean(), "gpt2 config: 'bias' must be true or false, got ", j["bias"].dump());
    c.bias = j["bias"].get<bool>();
  }
  auto get = [&](const char* key, int64_t& field) {
    if (!j.contains(key)) return;
    EMBER_CHECK(j[key].is_number_integer(), "gpt2 config: '", key, "' must be an integer, got ", j[key].dump());
    field = j[key].get<int64_t>();
  };
  get("n_layer", c.n_layer);
  get("n_head", c.n_head);
  get("n_embd", c.n_embd);
  get("vocab_size", c.vocab_size);
  get("n_positions", c.n_positions);
  // Hugging Face writes the context length twice; without n_positions, n_ctx sets it.
  if (j.contains("n_ctx")) {
    int64_t n_ctx = 0;
    get("n_ctx", n_ctx);
    check_size("n_ctx", n_ctx, kMaxPositions);
    if (!j.contains("n_positions")) c.n_positions = n_ctx;
  }
  if (j.contains("layer_norm_epsilon")) {
    EMBER_CHECK(j["layer_norm_epsilon"].is_number(), "gpt2 config: 'layer_norm_epsilon' must be a number");
    c.layer_norm_epsilon = j["layer_norm_epsilon"].get<double>();
  }
  c.validate();
  return c;
}

Config Config::from_json_file(const std::string& path) {
  std::ifstream f(path);
  EMBER_CHECK(f.good(), "gpt2 config: cannot open '", path, "'");
  std::ostringstream ss;
  ss << f.rdbuf();
  return from_json_string(ss.str());
}

std::string Config::to_json_string() const {
  nlohmann::json j = {{"model_type", "gpt2"},
                      {"architectures", {"GPT2LMHeadModel"}},
                      {"n_layer", n_layer},
                      {"n_head", n_head},
                      {"n_embd", n_embd},
                      {"vocab_size", vocab_size},
                      {"n_positions", n_positions},
                      {"n_ctx", n_positions},
                      {"layer_norm_epsilon", layer_norm_epsilon},
                      {"activation_function", activation_function},
                      {"bias", bias}};
  return j.dump(2);
}

}  // namespace ember::gpt2
