#include "models/gpt2/model.h"

#include <cmath>

#include "framework/core/autograd/trace.h"
#include "framework/train/functional/checkpoint.h"
#include "framework/train/nn/init.h"
#include "ops/elementwise/elementwise.h"
#include "ops/embedding/embedding.h"
#include "ops/loss/cross_entropy.h"
#include "ops/matmul/matmul.h"
#include "ops/norm/layer_norm.h"
#include "ops/quant/quant_linear.h"
#include "ops/shape/shape_ops.h"

namespace ember::gpt2 {

Conv1D::Conv1D(int64_t in, int64_t out, Generator& gen, bool with_bias) {
  // GPT-2 initialises every projection from N(0, 0.02).
  weight = register_parameter("weight", normal({in, out}, 0.0, 0.02, DType::Float32, &gen));
  if (with_bias) bias = register_parameter("bias", zeros({out}));
}

Tensor Conv1D::forward(const Tensor& x) {
  if (quantized) return quant::quant_linear(x, *quantized, bias.defined() ? bias.detach() : Tensor());
  Tensor y = matmul(x, weight);
  return bias.defined() ? y + bias : y;
}
std::string Conv1D::name() const { return str("Conv1D(", weight.size(0), ", ", weight.size(1), ")"); }

Block::Block(const Config& c, int64_t l, Generator& gen) : cfg(c), layer(l) {
  ln_1 = register_module("ln_1", std::make_shared<LayerNorm>(c.n_embd, c.layer_norm_epsilon, true, c.bias));
  // Hugging Face nests the projections under attn. and mlp.; the registered names mirror that.
  auto attn = register_module("attn", std::make_shared<Scope>());
  c_attn = attn->add("c_attn", std::make_shared<Conv1D>(c.n_embd, 3 * c.n_embd, gen, c.bias));
  attn_proj = attn->add("c_proj", std::make_shared<Conv1D>(c.n_embd, c.n_embd, gen, c.bias));
  ln_2 = register_module("ln_2", std::make_shared<LayerNorm>(c.n_embd, c.layer_norm_epsilon, true, c.bias));
  auto m = register_module("mlp", std::make_shared<Scope>());
  c_fc = m->add("c_fc", std::make_shared<Conv1D>(c.n_embd, 4 * c.n_embd, gen, c.bias));
  mlp_proj = m->add("c_proj", std::make_shared<Conv1D>(4 * c.n_embd, c.n_embd, gen, c.bias));
  // GPT-2 scales the residual projections by 1/sqrt(2 n_layer) at initialisation.
  double scale = 1.0 / std::sqrt(2.0 * double(c.n_layer));
  autograd::NoGradGuard ng;
  attn_proj->weight.copy_(attn_proj->weight * scale);
  mlp_proj->weight.copy_(mlp_proj->weight * scale);
}

std::vector<Tensor> Block::qkv_heads(const Tensor& h) const {
  // One (C x 3C) GEMM computes queries, keys and values of every head at once; the heads are
  // then views: (B, T, 3C) -> three (B, T, C) -> (B, T, H, hd) -> (B, H, T, hd).
  int64_t B = h.size(0), T = h.size(1), H = cfg.n_head, hd = cfg.head_dim();
  Tensor qkv = c_attn->forward(h);
  std::vector<Tensor> parts = split(qkv, cfg.n_embd, -1);
  for (Tensor& p : parts) p = p.reshape({B, T, H, hd}).transpose(1, 2);
  return parts;
}

Tensor Block::mlp(const Tensor& h, const Hooks* hooks) const {
  if (hooks && hooks->mlp_input) hooks->mlp_input(layer, h);
  Tensor a = gelu(c_fc->forward(h), /*tanh_approximation=*/!cfg.exact_gelu());
  if (hooks && hooks->mlp_hidden) a = hooks->mlp_hidden(layer, a);
  return mlp_proj->forward(a);
}

Tensor Block::forward(const Tensor& x, KVCache* cache, const Hooks* hooks) {
  int64_t B = x.size(0), T = x.size(1);
  Tensor h = ln_1->forward(x);
  if (hooks && hooks->attn_input) hooks->attn_input(layer, h);
  std::vector<Tensor> qkv = qkv_heads(h);
  // Contiguous heads: the attention kernels copy strided ones anyway, and a training step's backward
  // then reads these saved copies instead of copying the views again. A cache's keys and values are
  // read where they lie.
  Tensor q = qkv[0].contiguous(), k = cache ? qkv[1] : qkv[1].contiguous(), v = cache ? qkv[2] : qkv[2].contiguous();
  // The attention op aligns its causal mask bottom-right, so queries at positions
  // [cached, cached + T) see every cached key and the new keys up to their own: prefill, one-token
  // steps and chunks all use the same mask.
  if (cache) std::tie(k, v) = cache->append(layer, k, v);
  AttentionOptions opt;
  opt.causal = true;
  opt.impl = attention_impl;
  Tensor y = attention(q, k, v, opt);  // (B, H, T, hd)
  if (hooks && hooks->attn_heads) y = hooks->attn_heads(layer, y);
  y = y.transpose(1, 2).reshape({B, T, cfg.n_embd});  // merge heads back to (B, T, C)
  Tensor x1 = x + attn_proj->forward(y);
  return x1 + mlp(ln_2->forward(x1), hooks);
}

GPT2::GPT2(const Config& cfg, uint64_t seed) : cfg_(cfg) {
  cfg.validate();
  Generator gen(seed);
  wte = register_module("wte", std::make_shared<Table>(normal({cfg.vocab_size, cfg.n_embd}, 0.0, 0.02, DType::Float32, &gen)))->weight;
  wpe = register_module("wpe", std::make_shared<Table>(normal({cfg.n_positions, cfg.n_embd}, 0.0, 0.01, DType::Float32, &gen)))->weight;
  auto h = register_module("h", std::make_shared<Scope>());
  for (int64_t l = 0; l < cfg.n_layer; ++l)
    blocks.push_back(h->add(std::to_string(l), std::make_shared<Block>(cfg, l, gen)));
  ln_f = register_module("ln_f", std::make_shared<LayerNorm>(cfg.n_embd, cfg.layer_norm_epsilon, true, cfg.bias));
}

std::string GPT2::name() const {
  return str("GPT2(n_layer=", cfg_.n_layer, ", n_head=", cfg_.n_head, ", n_embd=", cfg_.n_embd, ", vocab=",
             cfg_.vocab_size, cfg_.bias ? "" : ", bias=false", cfg_.exact_gelu() ? ", gelu=exact" : "", ")");
}

void GPT2::set_attention_impl(const std::string& impl) {
  parse_attention_impl(impl, wte.device());  // an unknown name fails here, not at the first forward
  for (auto& b : blocks) b->attention_impl = impl;
}

Tensor GPT2::hidden(const Tensor& ids, KVCache* cache) {
  EMBER_CHECK(ids.defined() && ids.dtype() == DType::Int64 && ids.dim() == 2, "gpt2: ids must be int64 of shape (B, T), got ",
              ids.defined() ? str(ids.dtype(), to_string(ids.shape())) : "undefined");
  EMBER_CHECK(format_ == quant::WeightFormat::Float32 || !(is_training() && autograd::grad_enabled()),
              "gpt2: this model's weights are quantised to ", quant::format_name(format_),
              " for inference and cannot be trained; call eval() (or run under no_grad), or train the float32 "
              "model and quantise it afterwards");
  // A quantised model has nothing to differentiate: its forward records nothing.
  std::unique_ptr<autograd::NoGradGuard> inference;
  if (format_ != quant::WeightFormat::Float32) inference = std::make_unique<autograd::NoGradGuard>();
  int64_t T = ids.size(1), start = cache ? cache->length() : 0;
  EMBER_CHECK(T > 0, "gpt2: empty input");
  EMBER_CHECK(start + T <= cfg_.n_positions, "gpt2: ", start + T, " positions exceed the context length ",
              cfg_.n_positions);
  Tensor pos = wpe.slice(0, start, start + T);
  Tensor x = embedding(wte, ids) + pos;
  const bool replay = checkpoint_blocks && !cache && autograd::grad_enabled();
  if (replay)
    EMBER_CHECK(!hooks.mlp_hidden && !hooks.attn_heads && !hooks.mlp_input && !hooks.attn_input,
                "gpt2: checkpoint_blocks replays each block in backward and would call the hooks twice; clear the hooks "
                "or turn checkpoint_blocks off");
  for (auto& b : blocks) {
    if (replay) {
      Block* block = b.get();  // the model outlives its backward pass
      x = checkpoint([block](const Tensor& h) { return block->forward(h, nullptr, nullptr); }, x);
    } else {
      x = b->forward(x, cache, &hooks);
    }
  }
  if (cache) cache->advance(T);
  return ln_f->forward(x);
}

Tensor GPT2::forward(const Tensor& ids, KVCache* cache) { return lm_head(hidden(ids, cache)); }

Tensor GPT2::lm_head(const Tensor& h) const {
  // The LM head is the token embedding itself (weight tying): logits = h @ wte^T.
  if (lm_head_) return quant::quant_linear(h.detach(), *lm_head_);
  return matmul(h, wte.t());
}

void GPT2::quantize(quant::WeightFormat format) {
  EMBER_CHECK(format_ == quant::WeightFormat::Float32, "gpt2: the weights are already quantised to ",
              quant::format_name(format_), "; load the float32 model again to quantise it to ", quant::format_name(format));
  if (format == quant::WeightFormat::Float32) return;
  EMBER_CHECK(wte.device() == Device::CPU && wte.dtype() == DType::Float32,
              "gpt2: quantize needs float32 weights on the CPU, the model's are ", wte.dtype(), " on ", wte.device());
  autograd::NoGradGuard ng;
  // All matrices first, then the switch: an error leaves the model as it was.
  std::vector<std::pair<Conv1D*, std::shared_ptr<const quant::QuantizedMatrix>>> done;
  for (auto& b : blocks)
    for (Conv1D* c : {b->c_attn.get(), b->attn_proj.get(), b->c_fc.get(), b->mlp_proj.get()})
      done.emplace_back(c, std::make_shared<quant::QuantizedMatrix>(quant::quantize(c->weight, format, /*transposed=*/true)));
  auto head = std::make_shared<quant::QuantizedMatrix>(quant::quantize(wte, format));
  for (auto& [c, q] : done) c->quantized = q;
  lm_head_ = head;
  format_ = format;
  eval();
}

int64_t GPT2::decode_weight_bytes() const {
  // Every parameter once (wte as the LM head), in the format the step reads it.
  int64_t bytes = num_parameters() * 4;
  if (!lm_head_) return bytes;
  bytes += lm_head_->bytes() - wte.numel() * 4;
  for (auto& b : blocks)
    for (const Conv1D* c : {b->c_attn.get(), b->attn_proj.get(), b->c_fc.get(), b->mlp_proj.get()})
      bytes += c->quantized->bytes() - c->weight.numel() * 4;
  return bytes;
}

Tensor lm_loss(const Tensor& logits, const Tensor& targets) {
  EMBER_CHECK(logits.dim() == 3 && targets.dim() == 2 && logits.size(0) == targets.size(0) &&
                  logits.size(1) == targets.size(1),
              "lm_loss: logits ", to_string(logits.shape()), " and targets ", to_string(targets.shape()),
              " must be (B, T, V) and (B, T)");
  int64_t V = logits.size(2);
  return cross_entropy(logits.reshape({-1, V}), targets.reshape({-1}));
}

}  // namespace ember::gpt2
