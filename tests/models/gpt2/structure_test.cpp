// GPT-2 in nanoGPT's structure: Config::bias = false (no Conv1D or LayerNorm biases) and
// activation_function "gelu" (exact erf GELU), against a float64 forward written out here.
#include <cmath>
#include <filesystem>
#include <map>
#include <set>

#include "framework/train/io/atomic_write.h"
#include "models/gpt2/checkpoint.h"
#include "models/gpt2/generate.h"
#include "models/gpt2/gpt2_fixtures.h"
#include "models/gpt2/model.h"
#include "test_util.h"

using namespace ember;
using namespace ember::gpt2;
using ember::gpt2::testing::tiny_config;

namespace {

Config structure(bool bias, const char* activation) {
  Config c = tiny_config();
  c.bias = bias;
  c.activation_function = activation;
  return c;
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::map<std::string, Tensor> by_name(const nn::Module& m) {
  std::map<std::string, Tensor> out;
  for (auto& [n, t] : m.named_parameters()) out[n] = t;
  return out;
}

// Every parameter drawn afresh at a scale where the MLP's pre-activations are O(1) (so the two
// GELUs differ visibly) and the biases are not zero (so a dropped bias would show).
void randomize(GPT2& m, uint64_t seed) {
  Generator g(seed);
  autograd::NoGradGuard ng;
  for (auto& [n, p] : m.named_parameters()) {
    Tensor r = normal(p.shape(), 0.0, 1.0, DType::Float32, &g);
    if (n.find("ln_") != std::string::npos && ends_with(n, ".weight")) r = r * 0.2 + 1.0;
    else if (ends_with(n, ".bias")) r = r * 0.3;
    else if (p.dim() == 2 && n.find(".c_") != std::string::npos) r = r * (1.5 / std::sqrt(double(p.size(0))));
    else r = r * 0.5;  // wte, wpe
    p.copy_(r);
  }
}

Tensor f64(const Tensor& t) { return t.defined() ? cast(t.detach(), DType::Float64) : Tensor(); }

Tensor conv1d(const Tensor& x, const Conv1D& c) {
  Tensor y = matmul(x, f64(c.weight));
  return c.bias.defined() ? y + f64(c.bias) : y;
}

// GELU element by element in float64: exact 0.5 x (1 + erf(x / sqrt 2)), or the tanh form.
Tensor gelu_by_hand(const Tensor& x, bool exact) {
  std::vector<double> v = x.to_vector<double>();
  for (double& a : v)
    a = exact ? 0.5 * a * (1 + std::erf(a / std::sqrt(2.0)))
              : 0.5 * a * (1 + std::tanh(std::sqrt(2.0 / M_PI) * (a + 0.044715 * a * a * a)));
  return from_vector(v, x.shape());
}

// The logits of one sequence (1, T) in float64: causal attention per head, written out.
Tensor reference_logits(const GPT2& m, const Tensor& ids, bool exact) {
  const Config& c = m.config();
  const int64_t T = ids.size(1), C = c.n_embd, hd = c.head_dim();
  std::vector<double> mask(size_t(T * T));
  for (int64_t i = 0; i < T; ++i)
    for (int64_t j = 0; j < T; ++j) mask[size_t(i * T + j)] = j > i ? -1e300 : 0.0;
  const Tensor causal = from_vector(mask, {T, T});
  Tensor x = embedding(f64(m.wte), ids.reshape({T})) + f64(m.wpe).slice(0, 0, T);  // (T, C)
  for (const auto& b : m.blocks) {
    Tensor qkv = conv1d(layer_norm(x, f64(b->ln_1->weight), f64(b->ln_1->bias), c.layer_norm_epsilon), *b->c_attn);
    std::vector<Tensor> heads;
    for (int64_t h = 0; h < c.n_head; ++h) {
      Tensor q = qkv.slice(1, h * hd, (h + 1) * hd), k = qkv.slice(1, C + h * hd, C + (h + 1) * hd),
             v = qkv.slice(1, 2 * C + h * hd, 2 * C + (h + 1) * hd);
      heads.push_back(matmul(softmax(matmul(q, k.t()) / std::sqrt(double(hd)) + causal, -1), v));
    }
    x = x + conv1d(concat(heads, 1), *b->attn_proj);
    Tensor h2 = layer_norm(x, f64(b->ln_2->weight), f64(b->ln_2->bias), c.layer_norm_epsilon);
    x = x + conv1d(gelu_by_hand(conv1d(h2, *b->c_fc), exact), *b->mlp_proj);
  }
  x = layer_norm(x, f64(m.ln_f->weight), f64(m.ln_f->bias), c.layer_norm_epsilon);
  return matmul(x, f64(m.wte).t()).reshape({1, T, c.vocab_size});
}

double max_diff(const Tensor& a, const Tensor& b) { return max(abs(f64(a) - f64(b))).item(); }

Tensor random_ids(int64_t t, uint64_t seed) {
  Generator g(seed);
  return randint({1, t}, 0, tiny_config().vocab_size, &g);
}

}  // namespace

// A bias-less model has no ".bias" parameter; its other weights are the biased model's of the same
// seed, draw for draw; and it computes what that model computes with every bias set to zero, forward
// and backward.
TEST(Gpt2Structure, BiasFreeModelEqualsTheBiasedOneWithZeroBiases) {
  GPT2 nb(structure(false, "gelu_new"), 5), b(structure(true, "gelu_new"), 5);
  auto nbp = by_name(nb), bp = by_name(b);
  for (auto& [n, t] : nbp) {
    EXPECT_FALSE(ends_with(n, ".bias")) << n;
    ASSERT_TRUE(bp.count(n)) << n;
    EXPECT_TRUE(ember::testing::all_close(t, bp[n], 0, 0)) << n << " is drawn differently without biases";
  }
  int64_t biases = 0;
  for (auto& [n, t] : bp)
    if (!nbp.count(n)) {
      EXPECT_TRUE(ends_with(n, ".bias")) << n;
      ++biases;
    }
  // Four Conv1D and two LayerNorm biases per block, and ln_f's.
  EXPECT_EQ(biases, 6 * tiny_config().n_layer + 1);
  EXPECT_EQ(nb.name(), "GPT2(n_layer=2, n_head=2, n_embd=16, vocab=37, bias=false)");

  randomize(nb, 9);
  {
    autograd::NoGradGuard ng;
    for (auto& [n, t] : bp) t.copy_(nbp.count(n) ? nbp[n] : zeros(t.shape()));
  }
  Tensor ids = random_ids(7, 1), targets = random_ids(7, 2);
  Tensor lnb = lm_loss(nb.forward(ids), targets), lb = lm_loss(b.forward(ids), targets);
  EXPECT_NEAR(lnb.item(), lb.item(), 1e-6);
  {
    autograd::NoGradGuard ng;
    EXPECT_TRUE(ember::testing::all_close(nb.forward(ids), b.forward(ids), 1e-6, 1e-6));
  }
  lnb.backward();
  lb.backward();
  for (auto& [n, t] : nbp) {
    ASSERT_TRUE(t.grad().defined()) << n;
    EXPECT_GT(sum(abs(t.grad())).item(), 0.0) << n;
    EXPECT_TRUE(ember::testing::all_close(t.grad(), bp[n].grad(), 1e-6, 1e-5)) << n;
  }
  // The comparison is not vacuous: the biased model's biases do take part.
  {
    autograd::NoGradGuard ng;
    bp["h.1.mlp.c_fc.bias"].fill_(0.5);
    EXPECT_GT(max_diff(nb.forward(ids), b.forward(ids)), 1e-3);
  }
}

// Each structure (with or without biases, each GELU name) against the float64 forward of its own
// GELU: within float32 rounding of it, and far from the other GELU's (the two differ by up to 5e-4
// per element; on this model the logits by 9e-4 against 4e-6 of rounding).
TEST(Gpt2Structure, ForwardMatchesFloat64WithItsOwnGelu) {
  for (bool bias : {true, false})
    for (const char* act : {"gelu_new", "gelu_pytorch_tanh", "gelu"}) {
      GPT2 m(structure(bias, act), 3);
      randomize(m, 4);
      autograd::NoGradGuard ng;
      Tensor ids = random_ids(9, 5);
      Tensor got = m.forward(ids);
      const bool exact = std::string(act) == "gelu";
      EXPECT_EQ(m.config().exact_gelu(), exact);
      const double own = max_diff(got, reference_logits(m, ids, exact));
      const double other = max_diff(got, reference_logits(m, ids, !exact));
      EXPECT_LT(own, 2e-5) << act << " bias " << bias;
      EXPECT_GT(other, 20 * own) << act << " bias " << bias << ": the model's GELU is not the one configured";
    }
}

// Cached decoding, generation and weight-only quantisation work on a bias-less, exact-GELU model.
TEST(Gpt2Structure, CacheGenerateAndQuantizeWithoutBiases) {
  Config c = structure(false, "gelu");
  GPT2 m(c, 7);
  randomize(m, 8);
  autograd::NoGradGuard ng;
  Tensor ids = random_ids(10, 9);
  Tensor full = m.forward(ids);
  KVCache cache(c, 1);
  EXPECT_TRUE(ember::testing::all_close(m.forward(ids.slice(1, 0, 6), &cache), full.slice(1, 0, 6), 1e-5, 1e-5));
  for (int64_t t = 6; t < 10; ++t)
    EXPECT_TRUE(ember::testing::all_close(m.forward(ids.slice(1, t, t + 1), &cache), full.slice(1, t, t + 1), 1e-5, 1e-5))
        << "position " << t;
  SamplingOptions s;
  s.max_new_tokens = 8;
  std::vector<int64_t> with = generate(m, {1, 2, 3}, s);
  s.use_cache = false;
  EXPECT_EQ(with, generate(m, {1, 2, 3}, s));
  EXPECT_EQ(m.decode_weight_bytes(), m.num_parameters() * 4);
  EXPECT_EQ(m.num_parameters(), GPT2(structure(true, "gelu"), 7).num_parameters() -
                                    (c.n_layer * (3 * c.n_embd + c.n_embd + 4 * c.n_embd + c.n_embd + 2 * c.n_embd) + c.n_embd));

  GPT2 q(c, 7);
  randomize(q, 8);
  q.quantize(quant::WeightFormat::BFloat16);
  const double d = max_diff(q.forward(ids), full), scale = max(abs(full)).item();
  EXPECT_GT(d, 0.0);
  EXPECT_LT(d, 0.01 * scale);
  EXPECT_LT(q.decode_weight_bytes(), m.decode_weight_bytes());
}

// save_model / load_model keep the structure (config.json's "bias" and "activation_function") and
// every weight bitwise; weights and config that disagree about biases are refused by name.
TEST(Gpt2Structure, BiasFreeModelSavesAndLoadsBitwise) {
  GPT2 m(structure(false, "gelu"), 11);
  randomize(m, 12);
  const std::string dir = ::testing::TempDir() + "/ember_gpt2_structure";
  std::filesystem::remove_all(dir);
  save_model(m, dir);
  auto back = load_model(dir);
  EXPECT_FALSE(back->config().bias);
  EXPECT_EQ(back->config().activation_function, "gelu");
  auto want = by_name(m), got = by_name(*back);
  ASSERT_EQ(want.size(), got.size());
  for (auto& [n, t] : want) {
    ASSERT_TRUE(got.count(n)) << n;
    EXPECT_TRUE(ember::testing::all_close(got[n], t, 0, 0)) << n;
  }
  autograd::NoGradGuard ng;
  Tensor ids = random_ids(6, 13);
  EXPECT_TRUE(ember::testing::all_close(back->forward(ids), m.forward(ids), 0, 0));

  // The same weights under a config that promises biases: the first missing one is named.
  const std::string text = structure(true, "gelu").to_json_string();
  io::write_text_atomic(dir + "/config.json", text);
  EXPECT_EMBER_ERROR(load_model(dir), ".bias");
  // A biased model's weights under a config without biases: the first unexpected one is named.
  save_model(GPT2(structure(true, "gelu"), 11), dir);
  io::write_text_atomic(dir + "/config.json", structure(false, "gelu").to_json_string());
  EXPECT_EMBER_ERROR(load_model(dir), ".bias");
  std::filesystem::remove_all(dir);
}
