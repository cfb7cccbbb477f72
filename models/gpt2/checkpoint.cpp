#include "models/gpt2/checkpoint.h"

#include <filesystem>
#include <fstream>
#include <set>

#include "framework/io/safetensors.h"

namespace ember::gpt2 {

namespace {
bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}
}  // namespace

std::unique_ptr<GPT2> load_model(const std::string& dir) {
  namespace fs = std::filesystem;
  EMBER_CHECK(fs::is_directory(dir), "gpt2: model folder '", dir, "' does not exist");
  Config cfg = Config::from_json_file(dir + "/config.json");
  std::string weights = dir + "/model.safetensors";
  EMBER_CHECK(fs::exists(weights), "gpt2: '", weights,
              "' not found (Ember reads the safetensors format; convert pytorch_model.bin first)");
  NamedTensors raw = io::load_safetensors(weights).tensors;
  NamedTensors state;
  std::set<std::string> seen;
  Tensor lm_head;
  for (auto& [key, t] : raw) {
    std::string k = key.rfind("transformer.", 0) == 0 ? key.substr(12) : key;
    if (ends_with(k, ".attn.bias") || ends_with(k, ".attn.masked_bias")) continue;  // causal-mask buffers
    if (k == "lm_head.weight") {
      lm_head = t;
      continue;
    }
    EMBER_CHECK(seen.insert(k).second, "gpt2: tensor '", k, "' appears twice in ", weights);
    state.push_back({k, t.to(DType::Float32)});
  }
  auto model = std::make_unique<GPT2>(cfg);
  if (lm_head.defined())
    EMBER_CHECK(lm_head.shape() == model->wte.shape(), "gpt2: lm_head.weight has shape ", to_string(lm_head.shape()),
                " but the tied token embedding is ", to_string(model->wte.shape()));
  model->load_state_dict(state, /*strict=*/true);
  return model;
}

void save_model(const GPT2& model, const std::string& dir) {
  namespace fs = std::filesystem;
  fs::create_directories(dir);
  std::string tmp = dir + "/config.json.tmp";
  {
    std::ofstream f(tmp);
    EMBER_CHECK(f.good(), "gpt2: cannot write '", tmp, "'");
    f << model.config().to_json_string() << "\n";
  }
  fs::rename(tmp, dir + "/config.json");
  io::save_safetensors(dir + "/model.safetensors", model.state_dict());
}

}  // namespace ember::gpt2
