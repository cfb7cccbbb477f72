#include "models/gpt2/checkpoint.h"

#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "framework/train/io/safetensors.h"

namespace ember::gpt2 {

namespace {
bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}
std::string strip_prefix(const std::string& key) { return key.rfind("transformer.", 0) == 0 ? key.substr(12) : key; }

// Compares config.json with the weights' header before anything is allocated: the tensors that
// fix every size (the embeddings, the number of blocks, one block's MLP) must have the shapes the
// config declares. A config that promises more than its file holds is refused here, instead of
// the model being allocated and randomly initialised first.
void check_config_against_header(const Config& cfg, const std::vector<io::TensorInfo>& header,
                                 const std::string& weights) {
  std::map<std::string, Shape> shapes;
  std::set<int64_t> layers;
  for (const io::TensorInfo& t : header) {
    std::string k = strip_prefix(t.name);
    shapes[k] = t.shape;
    if (k.rfind("h.", 0) == 0) {
      const size_t dot = k.find('.', 2);
      const std::string idx = k.substr(2, dot == std::string::npos ? std::string::npos : dot - 2);
      if (!idx.empty() && idx.size() < 8 && idx.find_first_not_of("0123456789") == std::string::npos)
        layers.insert(std::stoll(idx));
    }
  }
  auto expect = [&](const std::string& name, const Shape& want, const char* keys) {
    auto it = shapes.find(name);
    EMBER_CHECK(it != shapes.end(), "gpt2: ", weights, " has no tensor '", name, "' (expected shape ", to_string(want),
                " from config.json's ", keys, ")");
    EMBER_CHECK(it->second == want, "gpt2: config.json declares ", keys, " giving ", name, " the shape ",
                to_string(want), ", but ", weights, " holds ", to_string(it->second),
                " (config.json and model.safetensors come from different models?)");
  };
  expect("wte.weight", {cfg.vocab_size, cfg.n_embd}, "vocab_size and n_embd");
  expect("wpe.weight", {cfg.n_positions, cfg.n_embd}, "n_positions and n_embd");
  const int64_t found = layers.empty() ? 0 : *layers.rbegin() + 1;
  EMBER_CHECK(found == cfg.n_layer && int64_t(layers.size()) == cfg.n_layer, "gpt2: config.json declares n_layer ",
              cfg.n_layer, " but ", weights, " holds ", layers.size(), " blocks (h.0 to h.", found - 1, ")");
  expect("h.0.mlp.c_fc.weight", {cfg.n_embd, 4 * cfg.n_embd}, "n_embd");
}
}  // namespace

std::unique_ptr<GPT2> load_model(const std::string& dir) {
  namespace fs = std::filesystem;
  EMBER_CHECK(fs::is_directory(dir), "gpt2: model folder '", dir, "' does not exist");
  Config cfg = Config::from_json_file(dir + "/config.json");
  std::string weights = dir + "/model.safetensors";
  EMBER_CHECK(fs::exists(weights), "gpt2: '", weights,
              "' not found (Ember reads the safetensors format; convert pytorch_model.bin first)");
  check_config_against_header(cfg, io::read_safetensors_header(weights), weights);
  NamedTensors raw = io::load_safetensors(weights).tensors;
  NamedTensors state;
  std::set<std::string> seen;
  Tensor lm_head;
  for (auto& [key, t] : raw) {
    std::string k = strip_prefix(key);
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
  // Atomic like the weights (a temp file of this process, renamed), so that a kill mid-write leaves
  // either the old config or the new one and no fixed-name leftover.
  const std::string text = model.config().to_json_string() + "\n";
  io::write_file_atomic(dir + "/config.json", std::vector<uint8_t>(text.begin(), text.end()));
  io::save_safetensors(dir + "/model.safetensors", model.state_dict());
}

}  // namespace ember::gpt2
