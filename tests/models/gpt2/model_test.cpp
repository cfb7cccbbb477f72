#include "models/gpt2/model.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "framework/train/io/safetensors.h"
#include "models/gpt2/checkpoint.h"
#include "models/gpt2/generate.h"
#include "models/gpt2/gpt2_fixtures.h"
#include "study_kernels.h"
#include "test_util.h"

using namespace ember;
using namespace ember::gpt2;
using ember::gpt2::testing::tiny_config;

namespace {


Tensor random_ids(int64_t b, int64_t t, int64_t vocab, uint64_t seed) {
  Generator g(seed);
  return randint({b, t}, 0, vocab, &g);
}

std::string temp_dir(const std::string& name) {
  std::string d = ::testing::TempDir() + "/ember_gpt2_" + name;
  std::filesystem::remove_all(d);
  return d;
}

}  // namespace

TEST(Gpt2Model, ParameterNamesAndShapesFollowHuggingFace) {
  GPT2 m(tiny_config());
  std::set<std::string> names;
  for (auto& [n, t] : m.named_parameters()) names.insert(n);
  for (const char* n : {"wte.weight", "wpe.weight", "h.0.ln_1.weight", "h.0.attn.c_attn.weight", "h.0.attn.c_attn.bias",
                        "h.0.attn.c_proj.weight", "h.1.ln_2.bias", "h.1.mlp.c_fc.weight", "h.1.mlp.c_proj.weight",
                        "ln_f.weight", "ln_f.bias"})
    EXPECT_TRUE(names.count(n)) << n;
  EXPECT_EQ(m.blocks[0]->c_attn->weight.shape(), (Shape{16, 48}));  // Conv1D: (in, out)
  EXPECT_EQ(m.blocks[0]->c_fc->weight.shape(), (Shape{16, 64}));
  Tensor logits = m.forward(random_ids(3, 5, 37, 1));
  EXPECT_EQ(logits.shape(), (Shape{3, 5, 37}));
}

// The fused (C x 3C) projection split into heads by views equals the per-head definition
// Q_h = X W_Q^h with W_Q^h the h-th block of columns.
TEST(Gpt2Model, FusedQkvSplitEqualsPerHeadProjections) {
  Config c = tiny_config();
  GPT2 m(c, 5);
  autograd::NoGradGuard ng;
  Generator g(2);
  Tensor h = randn({2, 4, c.n_embd}, DType::Float32, &g);
  std::vector<Tensor> qkv = m.blocks[0]->qkv_heads(h);
  const Tensor& W = m.blocks[0]->c_attn->weight;
  const Tensor& b = m.blocks[0]->c_attn->bias;
  int64_t hd = c.head_dim();
  for (int64_t which = 0; which < 3; ++which)
    for (int64_t head = 0; head < c.n_head; ++head) {
      int64_t col = which * c.n_embd + head * hd;
      Tensor per_head = matmul(h, W.slice(1, col, col + hd)) + b.slice(0, col, col + hd);  // (2, 4, hd)
      Tensor fused = qkv[size_t(which)].slice(1, head, head + 1).reshape({2, 4, hd});
      EXPECT_TRUE(ember::testing::all_close(fused, per_head, 1e-5, 1e-5)) << "part " << which << " head " << head;
    }
}

TEST(Gpt2Model, IsCausalLaterTokensDoNotChangeEarlierLogits) {
  GPT2 m(tiny_config(), 3);
  autograd::NoGradGuard ng;
  Tensor ids = random_ids(1, 8, 37, 4);
  Tensor full = m.forward(ids);
  Tensor ids2 = ids.clone();
  ids2.set({0, 7}, double((int64_t(ids.at({0, 7})) + 1) % 37));
  Tensor changed = m.forward(ids2);
  EXPECT_TRUE(ember::testing::all_close(changed.slice(1, 0, 7), full.slice(1, 0, 7), 1e-6, 1e-6));
  EXPECT_FALSE(ember::testing::all_close(changed.slice(1, 7, 8), full.slice(1, 7, 8), 1e-6, 1e-6));
}

TEST(Gpt2Model, KvCacheLogitsMatchRecomputationAndGreedyOutputsAreIdentical) {
  Config c = tiny_config();
  GPT2 m(c, 7);
  autograd::NoGradGuard ng;
  Tensor ids = random_ids(1, 10, c.vocab_size, 8);
  Tensor full = m.forward(ids);
  KVCache cache(c, 1);
  Tensor pre = m.forward(ids.slice(1, 0, 6), &cache);
  EXPECT_TRUE(ember::testing::all_close(pre, full.slice(1, 0, 6), 1e-5, 1e-5));
  for (int64_t t = 6; t < 10; ++t) {
    Tensor step = m.forward(ids.slice(1, t, t + 1), &cache);
    EXPECT_TRUE(ember::testing::all_close(step, full.slice(1, t, t + 1), 1e-5, 1e-5)) << "position " << t;
  }
  EXPECT_EQ(cache.length(), 10);
  EXPECT_EQ(cache.bytes(), 2 * c.n_layer * c.n_positions * c.n_embd * 4);

  SamplingOptions s;
  s.max_new_tokens = 12;
  std::vector<int64_t> prompt = {1, 2, 3};
  std::vector<int64_t> with = generate(m, prompt, s);
  s.use_cache = false;
  std::vector<int64_t> without = generate(m, prompt, s);
  EXPECT_EQ(with, without);
  EXPECT_EQ(with.size(), 12u);
}

// Feeding the sequence in chunks of several tokens through the cache equals one full pass.
TEST(Gpt2Model, KvCacheAcceptsChunksAfterThePrefill) {
  Config c = tiny_config();
  GPT2 m(c, 17);
  autograd::NoGradGuard ng;
  Tensor ids = random_ids(2, 11, c.vocab_size, 18);
  Tensor full = m.forward(ids);
  KVCache cache(c, 2);
  for (auto [lo, hi] : std::vector<std::pair<int64_t, int64_t>>{{0, 4}, {4, 7}, {7, 8}, {8, 11}})
    EXPECT_TRUE(ember::testing::all_close(m.forward(ids.slice(1, lo, hi), &cache), full.slice(1, lo, hi), 1e-5, 1e-5))
        << "chunk [" << lo << ", " << hi << ")";
  EXPECT_EQ(cache.length(), 11);
  EXPECT_EMBER_ERROR(m.forward(random_ids(2, 20, c.vocab_size, 19), &cache), "exceed");
}

TEST(Gpt2Model, EveryAttentionVariantGivesTheSameLogits) {
  // The library's kernel (the default, "" and "flash2") and every registered one (the study's
  // "standard" and "flash"), with and without the KV cache (whose steps take the decode path).
  ember::testing::register_study_kernels();
  GPT2 m(tiny_config(), 9);
  autograd::NoGradGuard ng;
  Tensor ids = random_ids(2, 9, 37, 10);
  EXPECT_EQ(m.blocks.at(0)->attention_impl, "");
  Tensor ref = m.forward(ids);
  std::vector<std::string> names = attention_variants(Device::CPU);
  for (const char* v : {"flash2", "standard", "flash"})
    EXPECT_NE(std::find(names.begin(), names.end(), v), names.end()) << v;
  for (const std::string& impl : names) {
    m.set_attention_impl(impl);
    EXPECT_EQ(m.blocks.back()->attention_impl, impl);
    EXPECT_TRUE(ember::testing::all_close(m.forward(ids), ref, 1e-5, 1e-4)) << impl;
    KVCache cache(m.config(), 2);
    for (auto [lo, hi] : std::vector<std::pair<int64_t, int64_t>>{{0, 5}, {5, 6}, {6, 9}})
      EXPECT_TRUE(ember::testing::all_close(m.forward(ids.slice(1, lo, hi), &cache), ref.slice(1, lo, hi), 1e-5, 1e-4))
          << impl << " cached [" << lo << ", " << hi << ")";
  }
  EXPECT_EMBER_ERROR(m.set_attention_impl("fast"), "variant 'fast' is not available on cpu");
  EXPECT_EQ(m.blocks.at(0)->attention_impl, names.back());  // a refused name changes nothing
}

TEST(Gpt2Model, LossBackwardReachesEveryParameter) {
  GPT2 m(tiny_config(), 11);
  Tensor ids = random_ids(2, 6, 37, 12);
  Tensor loss = lm_loss(m.forward(ids), random_ids(2, 6, 37, 13));
  EXPECT_NEAR(loss.item(), std::log(37.0), 0.5);  // near-uniform predictions at initialisation
  loss.backward();
  for (auto& [n, p] : m.named_parameters()) {
    ASSERT_TRUE(p.grad().defined()) << n;
    EXPECT_GT(sum(abs(p.grad())).item(), 0.0) << n;
  }
}

TEST(Gpt2Model, CheckpointedBlocksGiveTheSameGradientsWithLessMemory) {
  Config c = tiny_config();
  c.n_layer = 4;
  Tensor ids = random_ids(2, 20, 37, 14), targets = random_ids(2, 20, 37, 15);
  std::map<std::string, Tensor> grads[2];
  int64_t peak[2];
  for (int replay = 0; replay < 2; ++replay) {
    GPT2 m(c, 16);
    m.checkpoint_blocks = replay == 1;
    reset_peak_memory();
    const int64_t before = memory_stats().current_bytes;
    lm_loss(m.forward(ids), targets).backward();
    peak[replay] = memory_stats().peak_bytes - before;
    for (auto& [n, p] : m.named_parameters()) grads[replay][n] = p.grad();
  }
  ASSERT_EQ(grads[0].size(), grads[1].size());
  for (auto& [n, g] : grads[0]) EXPECT_TRUE(ember::testing::all_close(g, grads[1][n], 1e-6, 1e-4)) << n;
  EXPECT_LT(peak[1], peak[0]) << "keeping only block inputs must lower the peak";
  // Hooks would run twice in the replay: refused.
  GPT2 m(c, 16);
  m.checkpoint_blocks = true;
  m.hooks.mlp_input = [](int64_t, const Tensor&) {};
  EXPECT_EMBER_ERROR(m.forward(ids), "would call the hooks twice");
}

TEST(Gpt2Model, SamplingRespectsTopKTopPAndSeeds) {
  Tensor logits = from_vector(std::vector<float>{0.1f, 3.0f, 2.9f, -1.0f});
  Generator g(1);
  SamplingOptions s;
  EXPECT_EQ(sample_next(logits, s, g), 1);  // greedy
  s.temperature = 1.0;
  s.top_k = 1;
  for (int i = 0; i < 20; ++i) EXPECT_EQ(sample_next(logits, s, g), 1);
  s.top_k = 2;
  std::set<int64_t> seen;
  for (int i = 0; i < 200; ++i) seen.insert(sample_next(logits, s, g));
  EXPECT_EQ(seen, (std::set<int64_t>{1, 2}));
  s.top_k = 0;
  s.top_p = 0.3;  // the most likely token alone already holds more than 30%
  for (int i = 0; i < 20; ++i) EXPECT_EQ(sample_next(logits, s, g), 1);
  s.top_p = 1.0;
  Generator a(5), b(5);
  for (int i = 0; i < 20; ++i) EXPECT_EQ(sample_next(logits, s, a), sample_next(logits, s, b));
  s.temperature = -1;
  EXPECT_EMBER_ERROR(sample_next(logits, s, g), "temperature");
}

TEST(Gpt2Checkpoint, SavesAndLoadsHuggingFaceFolders) {
  Config c = tiny_config();
  GPT2 m(c, 21);
  std::string dir = temp_dir("roundtrip");
  save_model(m, dir);
  auto back = load_model(dir);
  EXPECT_EQ(back->config().n_embd, c.n_embd);
  autograd::NoGradGuard ng;
  Tensor ids = random_ids(1, 5, c.vocab_size, 22);
  EXPECT_TRUE(ember::testing::all_close(back->forward(ids), m.forward(ids), 0, 0));
}

TEST(Gpt2Checkpoint, AcceptsTheTransformerPrefixLmHeadAndMaskBuffers) {
  Config c = tiny_config();
  GPT2 m(c, 23);
  std::string dir = temp_dir("prefixed");
  save_model(m, dir);
  NamedTensors state;
  for (auto& [n, t] : m.state_dict()) state.push_back({"transformer." + n, t});
  state.push_back({"lm_head.weight", m.wte.detach()});
  state.push_back({"transformer.h.0.attn.bias", ones({1, 1, c.n_positions, c.n_positions})});
  io::save_safetensors(dir + "/model.safetensors", state);
  auto back = load_model(dir);
  autograd::NoGradGuard ng;
  Tensor ids = random_ids(1, 4, c.vocab_size, 24);
  EXPECT_TRUE(ember::testing::all_close(back->forward(ids), m.forward(ids), 0, 0));
}

TEST(Gpt2Checkpoint, ErrorsNameTheMissingOrMisShapedTensor) {
  Config c = tiny_config();
  GPT2 m(c, 25);
  std::string dir = temp_dir("broken");
  save_model(m, dir);
  NamedTensors state = m.state_dict(), missing, misshaped;
  for (auto& [n, t] : state) {
    if (n != "h.1.mlp.c_fc.bias") missing.push_back({n, t});
    misshaped.push_back({n, n == "h.0.attn.c_proj.weight" ? t.t().contiguous().reshape({8, 32}) : t});
  }
  io::save_safetensors(dir + "/model.safetensors", missing);
  EXPECT_EMBER_ERROR(load_model(dir), "h.1.mlp.c_fc.bias");
  io::save_safetensors(dir + "/model.safetensors", misshaped);
  EXPECT_EMBER_ERROR(load_model(dir), "h.0.attn.c_proj.weight");
  EXPECT_EMBER_ERROR(load_model(dir + "/nope"), "does not exist");
  std::ofstream(dir + "/config.json") << "{\"n_embd\": 10, \"n_head\": 3}";
  EXPECT_EMBER_ERROR(load_model(dir), "not divisible");
}
