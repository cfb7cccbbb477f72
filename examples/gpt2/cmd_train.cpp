#include <chrono>
#include <cmath>
#include <cxxopts.hpp>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <nlohmann/json.hpp>
#include <tuple>

#include "commands.h"
#include "examples/common/bench.h"
#include "examples/common/cli_flags.h"
#include "examples/common/progress_bar.h"
#include "framework/core/autograd/autocast.h"
#include "framework/core/autograd/trace.h"
#include "framework/train/io/checkpoint.h"
#include "framework/train/dist/data_parallel.h"
#include "framework/train/dist/settings_check.h"
#include "framework/train/optim/adam.h"
#include "framework/train/optim/clip_grad.h"
#include "framework/train/optim/param_group.h"
#include "models/gpt2/checkpoint.h"
#include "models/gpt2/generate.h"
#include "models/gpt2/text_data.h"
#include "precision.h"
#include "structure.h"
#include "train_resume.h"

namespace ember::gpt2::cli {
namespace {

// A byte-level vocabulary is GPT-2's BPE with no merges: the 256 byte symbols and end-of-text.
// Every output file is written atomically: a kill leaves the old file or the new one, never half.
void write_text(const std::string& path, const std::string& text) {
  io::write_text_atomic(path, text);
}

void write_byte_tokenizer(const std::string& dir) {
  nlohmann::json vocab;
  for (int b = 0; b < 256; ++b) vocab[byte_to_unicode()[size_t(b)]] = b;
  vocab["<|endoftext|>"] = 256;
  write_text(dir + "/vocab.json", vocab.dump());
  write_text(dir + "/merges.txt", "#version: 0.2\n");
}

// Evaluated in the training precision, as nanoGPT evaluates inside its autocast context.
double eval_loss(GPT2& model, const TextCorpus& data, int64_t batches, int64_t batch, int64_t context, bool bf16) {
  autograd::NoGradGuard ng;
  autocast::Guard amp(DType::BFloat16, /*enabled=*/bf16);
  Generator gen(12345);  // the same validation windows at every evaluation
  double total = 0;
  for (int64_t i = 0; i < batches; ++i) {
    auto [x, y] = data.batch(true, batch, context, gen);
    total += lm_loss(model.forward(x), y).item();
  }
  return total / double(batches);
}

}  // namespace

Config model_shape(const cxxopts::ParseResult& a) {
  using ember::cli::flag;
  Config cfg;
  cfg.n_layer = flag<int64_t>(a, "layers", 1, kMaxLayers);
  cfg.n_head = flag<int64_t>(a, "heads", 1, kMaxHeads);
  cfg.n_embd = flag<int64_t>(a, "embd", 1, kMaxEmbd);
  EMBER_CHECK(cfg.n_embd % cfg.n_head == 0, "--embd: ", cfg.n_embd, " is not divisible by --heads ", cfg.n_head,
              " (expected a multiple of it)");
  cfg.bias = parse_bias(a["bias"].as<std::string>());
  cfg.activation_function = parse_gelu(a["gelu"].as<std::string>());
  return cfg;
}

int train(int argc, char** argv) {
  cxxopts::Options o("gpt2 train",
                     "Train a small GPT-2 (byte-level vocabulary) on plain text, evaluate it on held-out text, save "
                     "it as a Hugging Face folder, and print a sample.");
  o.add_options()("data", "folder of text files", cxxopts::value<std::string>()->default_value("/usr/share/games/fortunes"))(
      "out", "output model folder", cxxopts::value<std::string>()->default_value("results/gpt2-fortunes"))(
      "steps", "optimizer steps at most", cxxopts::value<int64_t>()->default_value("2200"))(
      "minutes", "stop after this many minutes of training", cxxopts::value<double>()->default_value("15"))(
      "batch", "sequences per step", cxxopts::value<int64_t>()->default_value("16"))(
      "context", "tokens per sequence (and the model's context length)", cxxopts::value<int64_t>()->default_value("128"))(
      "layers", "transformer blocks", cxxopts::value<int64_t>()->default_value("4"))(
      "heads", "attention heads", cxxopts::value<int64_t>()->default_value("4"))(
      "embd", "embedding width", cxxopts::value<int64_t>()->default_value("128"))(
      "bias", kBiasHelp, cxxopts::value<std::string>()->default_value("true"))(
      "gelu", kGeluHelp, cxxopts::value<std::string>()->default_value("tanh"))(
      "lr", "peak learning rate (AdamW, warm-up then cosine)", cxxopts::value<double>()->default_value("3e-3"))(
      "beta2", "AdamW's second-moment decay: 0.99 suits small batches (nanoGPT's small-model recipe), 0.999 is "
               "PyTorch's default", cxxopts::value<double>()->default_value("0.99"))(
      "weight-decay", "AdamW's decoupled weight decay, on the weight matrices and embeddings only (biases and "
                      "layer-norm parameters are not decayed, as in GPT-2's and nanoGPT's recipes)",
      cxxopts::value<double>()->default_value("0.1"))(
      "eval-every", "steps between validation evaluations", cxxopts::value<int64_t>()->default_value("100"))(
      "eval-batches", "validation batches per evaluation", cxxopts::value<int64_t>()->default_value("16"))(
      "seed", "seed for initialisation and batches", cxxopts::value<uint64_t>()->default_value("0"))(
      "sample-tokens", "tokens of sample text to print at the end", cxxopts::value<int64_t>()->default_value("300"))(
      "resume", "continue from this checkpoint (OUT/checkpoint.safetensors, written after every evaluation) with the "
                "same options", cxxopts::value<std::string>()->default_value(""))(
      "checkpoint-blocks", "recompute each block's activations in backward instead of keeping them (less memory, "
                           "about one more forward per step)")(
      "distributed", "data-parallel on the ranks of mpirun (mpirun -np 2 gpt2 train --distributed); --batch is the "
                     "global batch, split between the ranks")(
      "precision", kPrecisionHelp, cxxopts::value<std::string>()->default_value("fp32"))(
      "h,help", "show this help");
  auto a = ember::cli::parse(o, argc, argv);
  if (a.count("help")) {
    std::cout << o.help() << "\n";
    return 0;
  }
  // Every numeric flag is checked before the text is read (examples/common/cli_flags.h).
  using ember::cli::flag;
  const int64_t steps = flag<int64_t>(a, "steps", 1, int64_t(1) << 40), batch = flag<int64_t>(a, "batch", 1, 1 << 16);
  const int64_t context = flag<int64_t>(a, "context", 2, kMaxPositions);
  const int64_t eval_every = flag<int64_t>(a, "eval-every", 1, int64_t(1) << 40);
  const int64_t eval_batches = flag<int64_t>(a, "eval-batches", 1, 1 << 20);
  Config cfg = model_shape(a);
  cfg.vocab_size = 257;
  cfg.n_positions = context;
  const double lr = flag<double>(a, "lr", 1e-12, 10, "a learning rate from 1e-12 to 10");
  const double beta2 = flag<double>(a, "beta2", 0.0, 0.999999, "a decay from 0 to 0.999999");
  const double weight_decay = flag<double>(a, "weight-decay", 0.0, 1e3, "a weight decay from 0 to 1000");
  const double minutes = flag<double>(a, "minutes", 1e-6, 1e6, "a positive number of minutes");
  const int64_t sample_tokens = flag<int64_t>(a, "sample-tokens", 0, 1 << 20);
  const std::string out = a["out"].as<std::string>(), resume = a["resume"].as<std::string>();
  const bool bf16 = parse_bf16(a["precision"].as<std::string>());
  // --distributed: every rank draws the same global batch (same generator) and trains on its rows;
  // rank 0 alone writes and prints the sample (examples/classifier/README.md, "Data-parallel training").
  dist::Communicator* comm = a.count("distributed") ? &dist::init() : nullptr;
  const bool root = !comm || comm->is_root();
  if (comm)  // before any collective whose size depends on them (framework/train/dist/settings_check.h)
    dist::check_same_settings(*comm,
                              {{"--seed", a["seed"].as<uint64_t>()}, {"--steps", steps}, {"--batch", batch},
                               {"--context", context}, {"--layers", cfg.n_layer}, {"--heads", cfg.n_head},
                               {"--embd", cfg.n_embd}, {"--lr", lr}, {"--eval-every", eval_every},
                               {"--eval-batches", eval_batches}, {"--checkpoint-blocks", a.count("checkpoint-blocks") > 0},
                               {"--resume", !resume.empty()}, {"--precision", bf16 ? "bf16" : "fp32"},
                               {"--beta2", beta2}, {"--weight-decay", weight_decay}, {"--bias", cfg.bias},
                               {"--gelu", cfg.activation_function}});
  if (comm)
    EMBER_CHECK(batch % comm->world_size() == 0, "--batch ", batch, " is not a multiple of the ", comm->world_size(),
                " ranks (expected the global batch, split evenly between them)");
  TextCorpus data = TextCorpus::from_fortunes(a["data"].as<std::string>());
  std::filesystem::create_directories(out);  // now, so that a bad --out fails before training
  const std::string ckpt_path = out + "/checkpoint.safetensors";
  if (root)
    for (const char* f : {"/checkpoint.safetensors", "/model.safetensors", "/config.json", "/vocab.json",
                          "/merges.txt", "/training.json"})
      io::remove_stale_temp_files(out + f);  // left by a run killed while writing
  GPT2 model(cfg, a["seed"].as<uint64_t>());
  model.checkpoint_blocks = a.count("checkpoint-blocks") > 0;
  double unigram = data.unigram_loss();
  std::cerr << "gpt2 train: " << model.name() << ", " << model.num_parameters() << " parameters; "
            << data.train_bytes() << " training and " << data.val_bytes() << " validation bytes; unigram baseline "
            << std::fixed << std::setprecision(3) << unigram << " nats/byte\n";

  optim::AdamOptions ao;
  ao.lr = lr;
  ao.beta2 = beta2;
  optim::AdamW opt(optim::decay_matrices_only(model.parameters(), weight_decay), ao);
  std::unique_ptr<dist::DataParallel> ddp;
  if (comm) ddp = std::make_unique<dist::DataParallel>(model.parameters(), *comm);
  double peak = ao.lr;
  int64_t warmup = std::min<int64_t>(100, steps / 10 + 1);
  Generator gen(a["seed"].as<uint64_t>() + 1);
  nlohmann::json log = nlohmann::json::array();
  auto t0 = std::chrono::steady_clock::now();
  double val = eval_loss(model, data, eval_batches, batch, context, bf16), train_avg = NAN, window_sum = 0;
  int64_t window_n = 0;
  log.push_back({{"step", 0}, {"val_loss", val}, {"seconds", 0.0}});
  int64_t step = 0;
  // Everything that changes what the remaining steps compute; a resume must match all of it.
  // (Not --minutes: each invocation has its own time budget, so a run stopped by it can go on.)
  nlohmann::json settings = {{"--seed", a["seed"].as<uint64_t>()}, {"--steps", steps}, {"--batch", batch},
                             {"--context", context}, {"--layers", cfg.n_layer}, {"--heads", cfg.n_head},
                             {"--embd", cfg.n_embd}, {"--lr", lr}, {"--eval-every", eval_every},
                             {"--eval-batches", eval_batches},
                             {"--data", text_fingerprint(data.train_text(), data.val_text())}};
  // Only a bf16 run names its precision, only a beta2 other than 0.999 (the value before the
  // flag) is named, and the structure only when it is not GPT-2's, so checkpoints written before
  // these flags still resume with their settings.
  if (bf16) settings["--precision"] = "bf16";
  if (beta2 != 0.999) settings["--beta2"] = beta2;
  // Always named, so that a checkpoint of a run that decayed every parameter (its optimizer state
  // numbered in another order) is refused by name rather than by a shape mismatch.
  settings["--weight-decay"] = weight_decay;
  if (!cfg.bias) settings["--bias"] = "false";
  if (cfg.exact_gelu()) settings["--gelu"] = "exact";
  double seconds_before = 0;  // training seconds of the runs this one resumes
  if (!resume.empty()) {
    io::Metadata header;
    io::read_safetensors_header(resume, &header);
    check_resume_settings(header, settings, resume);
    io::CheckpointInfo info = io::load_checkpoint(resume, model, opt);
    TrainResume r = parse_train_resume(info.metadata, info.step, settings, steps, eval_every, resume);
    step = info.step;
    log = r.log;
    val = r.val_loss;
    seconds_before = r.seconds;
    // The batch stream is a function of the seed alone: draw (and drop) the batches already trained on.
    for (int64_t s = 0; s < step; ++s) data.batch(false, batch, context, gen);
    std::cerr << "resumed from " << resume << " at step " << step << "\n";
  }
  const int64_t first_step = step;
  examples::ProgressBar bar("  train", steps, true, stderr, "steps");
  bar.resume_from(step);
  for (; step < steps; ++step) {
    double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    bool out_of_time = elapsed > minutes * 60;
    if (comm) {  // rank 0's clock decides, so that every rank stops at the same step
      Tensor stop = scalar(out_of_time ? 1.0 : 0.0, DType::Float64);
      comm->broadcast(stop, 0);
      out_of_time = stop.item() != 0;
    }
    if (out_of_time) break;
    double lr = step < warmup ? peak * double(step + 1) / double(warmup)
                              : 0.1 * peak + 0.9 * peak * 0.5 * (1 + std::cos(M_PI * double(step - warmup) / double(steps - warmup)));
    opt.set_lr(lr);
    // Named tensors, not a structured binding: C++17 lambdas may not capture those (clang refuses).
    Tensor x, y;
    std::tie(x, y) = data.batch(false, batch, context, gen);
    if (comm) {
      const int64_t n = batch / comm->world_size();
      x = x.narrow(0, comm->rank() * n, n).contiguous();
      y = y.narrow(0, comm->rank() * n, n).contiguous();
    }
    Tensor loss = [&] {
      autocast::Guard amp(DType::BFloat16, /*enabled=*/bf16);
      return lm_loss(model.forward(x), y);
    }();
    if (ddp) ddp->backward(loss);
    else loss.backward();
    optim::clip_grad_norm(model.parameters(), 1.0);
    opt.step();
    opt.zero_grad();
    window_sum += loss.item();
    train_avg = window_sum / double(++window_n);  // mean training loss since the last evaluation
    if ((step + 1) % eval_every == 0 || step + 1 == steps) {
      window_sum = 0;
      window_n = 0;
      val = eval_loss(model, data, eval_batches, batch, context, bf16);
      log.push_back({{"step", step + 1}, {"train_loss", train_avg}, {"val_loss", val}, {"seconds", seconds_before + elapsed}});
      if (root)  // one writer; every rank holds the same parameters and optimizer state
        io::save_checkpoint(ckpt_path, model, opt, step + 1,
                            {{"settings", settings.dump()}, {"log", log.dump()}, {"seconds", str(seconds_before + elapsed)}});
    }
    char status[96];
    std::snprintf(status, sizeof status, "train %.3f  val %.3f  lr %.2e", train_avg, val, lr);
    bar.update(step + 1, step + 1 - first_step, status);
  }
  double seconds = seconds_before + std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  bar.finish();
  val = eval_loss(model, data, eval_batches * 4, batch, context, bf16);
  std::cout << std::fixed << std::setprecision(3) << "trained " << step << " steps in " << std::setprecision(0) << seconds
            << " s; validation loss " << std::setprecision(3) << val << " nats/byte (unigram baseline " << unigram
            << ")\n";
  if (ddp)
    std::cout << "gradient averaging on rank " << comm->rank() << ": " << std::setprecision(3)
              << ddp->stats().sync_seconds << " s of " << seconds << " s, " << 1e3 * ddp->stats().sync_seconds / double(std::max<int64_t>(step, 1))
              << " ms per step\n";
  if (!root) {
    dist::finalize();
    return 0;
  }
  save_model(model, out);
  write_byte_tokenizer(out);
  nlohmann::json summary = {{"steps", step},        {"seconds", seconds}, {"val_loss", val}, {"precision", bf16 ? "bf16" : "fp32"},
                            {"unigram_loss", unigram}, {"config", nlohmann::json::parse(cfg.to_json_string())},
                            {"batch", batch},       {"log", log}};
  ember::bench::write_json(out + "/training.json", summary);
  std::cout << "saved the model to " << out << "\n\nsample:\n";
  Tokenizer tok = Tokenizer::from_dir(out);
  SamplingOptions s;
  s.max_new_tokens = std::min<int64_t>(sample_tokens, context - 2);
  s.temperature = 0.8;
  s.seed = 1;
  std::vector<int64_t> prompt = tok.encode("Q: ");
  std::cout << tok.decode(prompt);
  generate(model, prompt, s, [&](int64_t id) { std::cout << tok.token(id) << std::flush; });
  std::cout << "\n";
  dist::finalize();
  return 0;
}

}  // namespace ember::gpt2::cli
