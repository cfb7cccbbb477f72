// GPT-2 (models/gpt2) from Python: the config, the model loaded from or saved to a Hugging Face
// folder, its KV cache, generation and the byte-level BPE tokenizer. ember/models.py puts the
// Pythonic spellings (from_pretrained, text prompts) on top of these.
#include <nanobind/stl/unique_ptr.h>

#include "models/gpt2/checkpoint.h"
#include "models/gpt2/generate.h"
#include "models/gpt2/tokenizer.h"

#include "bindings.h"

namespace ember::py {
namespace {

using gpt2::Config;
using gpt2::GPT2;
using gpt2::KVCache;
using gpt2::Tokenizer;

nb::dict tensor_dict(const NamedTensors& ts) {
  nb::dict d;
  for (const auto& [name, t] : ts) d[name.c_str()] = t;
  return d;
}

// Token bytes need not be UTF-8 (a multi-byte character is split across tokens), so they cross as
// bytes and ember/models.py decodes them with the error policy the caller asks for.
nb::bytes as_bytes(const std::string& s) { return nb::bytes(s.data(), s.size()); }

void bind_config(nb::module_& m) {
  nb::class_<Config>(m, "GPT2Config")
      .def("__init__", [](Config* self, int64_t n_layer, int64_t n_head, int64_t n_embd, int64_t vocab_size,
                          int64_t n_positions, double eps, bool bias, std::string activation) {
        new (self) Config();
        self->n_layer = n_layer;
        self->n_head = n_head;
        self->n_embd = n_embd;
        self->vocab_size = vocab_size;
        self->n_positions = n_positions;
        self->layer_norm_epsilon = eps;
        self->bias = bias;
        self->activation_function = std::move(activation);
        self->validate();  // a bad size fails here, by name, not at the first allocation
      }, nb::arg("n_layer") = 12, nb::arg("n_head") = 12, nb::arg("n_embd") = 768, nb::arg("vocab_size") = 50257,
           nb::arg("n_positions") = 1024, nb::arg("layer_norm_epsilon") = 1e-5, nb::arg("bias") = true,
           nb::arg("activation_function") = "gelu_new")
      .def_ro("n_layer", &Config::n_layer)
      .def_ro("n_head", &Config::n_head)
      .def_ro("n_embd", &Config::n_embd)
      .def_ro("vocab_size", &Config::vocab_size)
      .def_ro("n_positions", &Config::n_positions)
      .def_ro("layer_norm_epsilon", &Config::layer_norm_epsilon)
      .def_ro("bias", &Config::bias)
      .def_ro("activation_function", &Config::activation_function)
      .def_prop_ro("head_dim", &Config::head_dim)
      .def_static("preset", &Config::preset, nb::arg("name"))
      .def_static("from_json_file", &Config::from_json_file, nb::arg("path"))
      .def_static("from_json_string", &Config::from_json_string, nb::arg("text"))
      .def("to_json_string", &Config::to_json_string)
      .def("__repr__", [](const Config& c) {
        return str("GPT2Config(n_layer=", c.n_layer, ", n_head=", c.n_head, ", n_embd=", c.n_embd,
                   ", vocab_size=", c.vocab_size, ", n_positions=", c.n_positions,
                   c.bias ? "" : ", bias=False", c.exact_gelu() ? ", activation_function='gelu'" : "", ")");
      });
}

void bind_model(nb::module_& m) {
  nb::class_<KVCache>(m, "GPT2KVCache")
      .def(nb::init<const Config&, int64_t, int64_t>(), nb::arg("config"), nb::arg("batch") = 1,
           nb::arg("capacity") = -1)
      .def_prop_ro("length", &KVCache::length)
      .def_prop_ro("capacity", &KVCache::capacity)
      .def_prop_ro("bytes", &KVCache::bytes)
      .def("reset", &KVCache::reset);

  nb::class_<GPT2>(m, "_GPT2")
      .def(nb::init<const Config&, uint64_t>(), nb::arg("config"), nb::arg("seed") = 0)
      .def_static("load", &gpt2::load_model, nb::arg("folder"), release_gil())
      .def("save", [](const GPT2& g, const std::string& dir) { gpt2::save_model(g, dir); }, nb::arg("folder"),
           release_gil())
      // The cache, when given, must outlive nothing but this call: the model keeps no pointer to it.
      .def("forward", [](GPT2& g, const Tensor& ids, KVCache* cache) { return g.forward(ids, cache); },
           nb::arg("ids"), nb::arg("cache") = nb::none(), release_gil())
      .def("hidden", [](GPT2& g, const Tensor& ids, KVCache* cache) { return g.hidden(ids, cache); },
           nb::arg("ids"), nb::arg("cache") = nb::none(), release_gil())
      .def("generate", [](GPT2& g, const std::vector<int64_t>& prompt, int64_t max_new_tokens, double temperature,
                          int64_t top_k, double top_p, uint64_t seed, bool use_cache, int64_t stop_token,
                          std::optional<nb::object> on_token) {
        gpt2::SamplingOptions o;
        o.max_new_tokens = max_new_tokens;
        o.temperature = temperature;
        o.top_k = top_k;
        o.top_p = top_p;
        o.seed = seed;
        o.use_cache = use_cache;
        o.stop_token = stop_token;
        // The callback runs with the GIL taken back (PyCallable); a Python exception in it ends the
        // generation and propagates.
        std::function<void(int64_t)> cb;
        if (on_token && !on_token->is_none()) {
          PyCallable fn(*on_token);
          cb = [fn](int64_t id) { fn(id); };
        }
        nb::gil_scoped_release no_gil;
        return gpt2::generate(g, prompt, o, cb);
      }, nb::arg("prompt"), nb::arg("max_new_tokens"), nb::arg("temperature"), nb::arg("top_k"), nb::arg("top_p"),
           nb::arg("seed"), nb::arg("use_cache"), nb::arg("stop_token"), nb::arg("on_token") = nb::none())
      .def_prop_ro("config", &GPT2::config)
      .def("quantize", [](GPT2& g, const std::string& format) { g.quantize(quant::parse_format(format)); },
           nb::arg("format"), release_gil())
      .def_prop_ro("weights", [](const GPT2& g) { return std::string(quant::format_name(g.weight_format())); })
      .def_prop_ro("decode_weight_bytes", &GPT2::decode_weight_bytes)
      .def_prop_rw("attention",
                   [](const GPT2& g) { return g.blocks.at(0)->attention_impl; },
                   [](GPT2& g, const std::string& s) { g.set_attention_impl(s); })
      .def("state_dict", [](const GPT2& g) { return tensor_dict(g.state_dict()); })
      .def("parameters", &GPT2::parameters)
      .def("num_parameters", &GPT2::num_parameters)
      .def("train", &GPT2::train, nb::arg("on") = true)
      .def("eval", &GPT2::eval)
      .def_prop_ro("training", &GPT2::is_training)
      .def("zero_grad", &GPT2::zero_grad);
  m.def("_gpt2_lm_loss", &gpt2::lm_loss, nb::arg("logits"), nb::arg("targets"), release_gil());
}

void bind_tokenizer(nb::module_& m) {
  nb::class_<Tokenizer>(m, "_GPT2Tokenizer")
      .def_static("from_dir", &Tokenizer::from_dir, nb::arg("folder"))
      .def_static("from_files", &Tokenizer::from_files, nb::arg("vocab_json"), nb::arg("merges_txt"))
      .def_static("from_strings", [](nb::bytes vocab, nb::bytes merges) {
        return Tokenizer::from_strings(std::string(vocab.c_str(), vocab.size()),
                                       std::string(merges.c_str(), merges.size()));
      }, nb::arg("vocab_json"), nb::arg("merges_txt"))
      .def("encode", [](const Tokenizer& t, nb::bytes text) { return t.encode(std::string(text.c_str(), text.size())); },
           nb::arg("text"))
      .def("decode", [](const Tokenizer& t, const std::vector<int64_t>& ids) { return as_bytes(t.decode(ids)); },
           nb::arg("ids"))
      .def("token", [](const Tokenizer& t, int64_t id) { return as_bytes(t.token(id)); }, nb::arg("id"))
      .def("pretokenize", [](const Tokenizer& t, nb::bytes text) {
        nb::list out;
        for (const std::string& p : t.pretokenize(std::string(text.c_str(), text.size()))) out.append(as_bytes(p));
        return out;
      }, nb::arg("text"))
      .def_prop_ro("vocab_size", &Tokenizer::vocab_size)
      .def_prop_ro("eot_id", &Tokenizer::eot_id)
      .def("check_covers", &Tokenizer::check_covers, nb::arg("model_vocab"), nb::arg("what"));
}

}  // namespace

void bind_gpt2(nb::module_& m) {
  bind_config(m);
  bind_model(m);
  bind_tokenizer(m);
}

}  // namespace ember::py
