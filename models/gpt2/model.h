// GPT-2 (Radford et al. 2019) as in Hugging Face's checkpoints: token and position embeddings,
// pre-LayerNorm blocks of causal self-attention and a GELU (tanh form) MLP, a final LayerNorm,
// and an LM head tied to the token embedding. Parameter names match Hugging Face's
// ("h.0.attn.c_attn.weight", ...), and Conv1D weights are stored (in, out) as there. Config::bias
// = false and activation_function "gelu" give nanoGPT's structure: no biases, exact GELU.
#pragma once
#include <functional>
#include <memory>
#include <vector>

#include "framework/train/nn/layer_norm.h"
#include "framework/train/nn/module.h"
#include "models/gpt2/config.h"
#include "models/gpt2/kv_cache.h"
#include "ops/attention/attention.h"
#include "ops/quant/quantized_matrix.h"

namespace ember::gpt2 {

// y = x @ weight + bias with weight (in, out): Hugging Face's Conv1D, kept so names and layouts
// load without transposes. Without a bias, bias stays undefined and is not a parameter.
class Conv1D : public nn::Module {
 public:
  Conv1D(int64_t in, int64_t out, Generator& gen, bool bias = true);
  Tensor forward(const Tensor& x) override;
  std::string name() const override;
  Tensor weight, bias;
  // Set by GPT2::quantize: forward then multiplies by these int8/bf16 weights (ops/quant/) and
  // no longer reads `weight`, which stays as loaded (state_dict and save still see the float32).
  std::shared_ptr<const quant::QuantizedMatrix> quantized;
};

// A module that only groups others under a name ("attn", "mlp", "h"), so parameter names
// match Hugging Face's ("h.0.attn.c_attn.weight").
class Scope : public nn::Module {
 public:
  template <class M>
  std::shared_ptr<M> add(const std::string& name, std::shared_ptr<M> m) {
    return register_module(name, std::move(m));
  }
  Tensor forward(const Tensor&) override { throw Error("gpt2: a Scope groups modules and has no forward"); }
  std::string name() const override { return "Scope"; }
};

// A learned table (token or position embeddings) registered as "<name>.weight".
class Table : public nn::Module {
 public:
  explicit Table(Tensor init) { weight = register_parameter("weight", std::move(init)); }
  Tensor forward(const Tensor&) override { throw Error("gpt2: a Table is read through embedding()"); }
  std::string name() const override { return "Table"; }
  Tensor weight;
};

// GPT-2's layer norms are the library's (framework/train/nn/layer_norm.h): weight and bias of n_embd
// (no bias when Config::bias is false).
using LayerNorm = nn::LayerNorm;

// Observation and intervention points for the contextual-sparsity study. Each hook gets the
// layer index and a tensor and returns the tensor to use in its place.
struct Hooks {
  // The MLP's hidden activations after GELU, (B, T, 4C).
  std::function<Tensor(int64_t layer, const Tensor& hidden)> mlp_hidden;
  // Each head's attention output before the heads are merged, (B, n_head, T, head_dim).
  std::function<Tensor(int64_t layer, const Tensor& heads)> attn_heads;
  // The input of each block's MLP (after ln_2), (B, T, C).
  std::function<void(int64_t layer, const Tensor& mlp_in)> mlp_input;
  // The input of each block's attention (after ln_1), (B, T, C): what a head predictor reads.
  std::function<void(int64_t layer, const Tensor& attn_in)> attn_input;
};

class Block : public nn::Module {
 public:
  Block(const Config& cfg, int64_t layer, Generator& gen);
  Tensor forward(const Tensor& x) override { return forward(x, nullptr, nullptr); }
  Tensor forward(const Tensor& x, KVCache* cache, const Hooks* hooks);
  std::string name() const override { return "Block"; }

  // q, k, v of a normalised input h: one fused (C x 3C) projection, split into heads by views.
  std::vector<Tensor> qkv_heads(const Tensor& h) const;
  Tensor mlp(const Tensor& h, const Hooks* hooks) const;

  Config cfg;
  int64_t layer;
  // The attention kernel by name (AttentionOptions::impl): "" is the library's for the device,
  // FlashAttention-2 on the CPU; a study's registered kernels ("flash", "standard") by their names.
  std::string attention_impl;
  std::shared_ptr<LayerNorm> ln_1, ln_2;
  std::shared_ptr<Conv1D> c_attn, attn_proj, c_fc, mlp_proj;
};

class GPT2 : public nn::Module {
 public:
  explicit GPT2(const Config& cfg, uint64_t seed = 0);

  // ids (B, T) int64 -> logits (B, T, vocab). With a cache, the ids continue the cached positions.
  Tensor forward(const Tensor& ids) override { return forward(ids, nullptr); }
  Tensor forward(const Tensor& ids, KVCache* cache);
  // The final hidden states (B, T, C), before the LM head.
  Tensor hidden(const Tensor& ids, KVCache* cache = nullptr);
  std::string name() const override;

  // Every block's attention kernel; ember::Error, listing what is registered, for a name the
  // device of the model's weights has no kernel for.
  void set_attention_impl(const std::string& impl);
  Hooks hooks;  // empty by default
  // Training memory for compute: each block's activations are dropped after its forward and
  // recomputed in backward (framework/train/functional/checkpoint.h); only block inputs stay alive.
  // Used without a cache and without hooks (a replay would call them twice).
  bool checkpoint_blocks = false;

  const Config& config() const { return cfg_; }

  // Weight-only quantisation for inference: every linear layer's weight (attention c_attn and
  // c_proj, MLP c_fc and c_proj) and the tied LM head (a quantised copy of wte; the embedding
  // lookup keeps reading the float32 wte, one row per token) are stored in `format`, and forward,
  // hidden, lm_head and generate use the quantised products. The model switches to eval mode, and
  // its forward records nothing for autograd; a forward in training mode (train()) with gradients
  // enabled is refused. ember::Error for a second quantisation, for weights not float32 on the CPU.
  // quantize(Float32) on a float32 model does nothing.
  void quantize(quant::WeightFormat format);
  quant::WeightFormat weight_format() const { return format_; }
  // logits = h @ wte^T, or the quantised LM head's product after quantize().
  Tensor lm_head(const Tensor& h) const;
  // The weight bytes one cached decode step streams: every parameter once (wte as the LM head), the
  // projections and the LM head in their format, the rest (norms, biases, wpe) as float32.
  int64_t decode_weight_bytes() const;

  std::vector<std::shared_ptr<Block>> blocks;
  Tensor wte, wpe;
  std::shared_ptr<LayerNorm> ln_f;

 private:
  Config cfg_;
  quant::WeightFormat format_ = quant::WeightFormat::Float32;
  std::shared_ptr<const quant::QuantizedMatrix> lm_head_;
};

// Mean cross-entropy of next-token prediction: logits (B, T, V) against ids shifted by one.
Tensor lm_loss(const Tensor& logits, const Tensor& targets);

}  // namespace ember::gpt2
