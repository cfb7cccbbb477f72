// train_classifier: trains an MLP (or, with --model cnn, a small CNN) on Fashion-MNIST with Ember's nn, optim, data and io layers.
// Shows a live progress bar on stderr, prints one table row per epoch on stdout, writes the
// metrics (CSV and JSON), a resumable checkpoint and the final model (safetensors) under --out.
#include <omp.h>
#include <sys/stat.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cxxopts.hpp>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "examples/common/bench.h"
#include "examples/common/cli_flags.h"
#include "examples/common/cli_lists.h"
#include "framework/core/autograd/trace.h"
#include "framework/train/data/data_loader.h"
#include "framework/train/data/fashion_mnist.h"
#include "framework/train/dist/data_parallel.h"
#include "framework/train/dist/settings_check.h"
#include "framework/train/dist/sharded_sampler.h"
#include "framework/train/io/checkpoint.h"
#include "framework/train/io/safetensors.h"
#include "framework/train/nn/mlp.h"
#include "framework/train/optim/adam.h"
#include "framework/train/optim/clip_grad.h"
#include "framework/train/optim/lr_schedule.h"
#include "framework/train/optim/sgd.h"
#include "ops/loss/cross_entropy.h"
#include "ops/reduce/reduce.h"
#include "cnn_model.h"
#include "examples/common/progress_bar.h"
#include "resume.h"

using namespace ember;
using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace {

struct Config {
  std::string data_dir, out_dir, resume, json_path;
  std::vector<int64_t> hidden;
  std::string model, activation, init, optimizer, schedule;
  int64_t epochs, stop_after, batch_size, val_size, warmup_steps, limit, threads, eval_batch;
  double lr, min_lr, weight_decay, momentum, dropout, clip;
  bool nesterov, progress, distributed;
  uint64_t seed;
};

std::vector<int64_t> parse_sizes(const std::string& s) {
  std::vector<int64_t> out = cli::int_list(s, "--hidden", "layer sizes such as 256,128");
  for (int64_t v : out) EMBER_CHECK(v > 0, "--hidden: ", v, " is not a positive layer size (expected e.g. 256,128)");
  return out;
}

void make_dirs(const std::string& path) {
  for (size_t i = 1; i <= path.size(); ++i)
    if (i == path.size() || path[i] == '/') {
      std::string p = path.substr(0, i);
      struct stat st;
      if (::stat(p.c_str(), &st) != 0) EMBER_CHECK(::mkdir(p.c_str(), 0755) == 0 || errno == EEXIST, "cannot create folder '", p, "'");
    }
}

struct EvalResult {
  double loss = 0, accuracy = 0;
  std::vector<int64_t> correct_per_class, count_per_class;
};

// Loss and accuracy of the model on a dataset, in evaluation mode and without recording.
EvalResult evaluate(nn::Module& model, const std::shared_ptr<const data::Dataset>& ds, int64_t batch, int64_t classes) {
  autograd::NoGradGuard no_grad;
  model.eval();
  data::DataLoader loader(ds, {batch, false, false, 0});
  EvalResult r;
  r.correct_per_class.assign(size_t(classes), 0);
  r.count_per_class.assign(size_t(classes), 0);
  double loss_sum = 0;
  int64_t correct = 0;
  for (const data::Batch& b : loader.epoch(0)) {
    Tensor logits = model(b.inputs);
    loss_sum += cross_entropy(logits, b.targets).item() * double(b.targets.numel());
    Tensor pred = argmax(logits, 1);
    const int64_t* p = pred.data<int64_t>();
    const int64_t* y = b.targets.data<int64_t>();
    for (int64_t i = 0; i < b.targets.numel(); ++i) {
      r.count_per_class[size_t(y[i])]++;
      if (p[i] == y[i]) ++correct, r.correct_per_class[size_t(y[i])]++;
    }
  }
  model.train();
  int64_t n = ds->size();
  r.loss = n ? loss_sum / double(n) : 0;
  r.accuracy = n ? double(correct) / double(n) : 0;
  return r;
}

void write_text(const std::string& path, const std::string& text) {
  io::write_text_atomic(path, text);
}

std::string metrics_csv(const json& epochs) {
  std::ostringstream os;
  os << "epoch,step,lr,train_loss,train_accuracy,val_loss,val_accuracy,epoch_seconds,samples_per_second\n";
  for (const json& e : epochs) {
    os << e["epoch"] << ',' << e["step"] << ',' << e["lr"] << ',' << e["train_loss"] << ',' << e["train_accuracy"] << ','
       << e["val_loss"] << ',' << e["val_accuracy"] << ',' << e["epoch_seconds"] << ',' << e["samples_per_second"] << '\n';
  }
  return os.str();
}

// Every flag that changes what a data-parallel run computes; the ranks must agree on all of them.
// (Not --data, --out, --resume or --json: paths may differ between machines; not --threads.)
nlohmann::ordered_json settings_of(const Config& c) {
  return {{"--model", c.model},       {"--hidden", c.hidden},         {"--activation", c.activation},
          {"--init", c.init},         {"--dropout", c.dropout},       {"--epochs", c.epochs},
          {"--stop-after", c.stop_after}, {"--batch-size", c.batch_size}, {"--optimizer", c.optimizer},
          {"--lr", c.lr},             {"--min-lr", c.min_lr},         {"--schedule", c.schedule},
          {"--warmup-steps", c.warmup_steps}, {"--weight-decay", c.weight_decay}, {"--momentum", c.momentum},
          {"--nesterov", c.nesterov}, {"--clip-grad", c.clip},        {"--val-size", c.val_size},
          {"--limit", c.limit},       {"--seed", c.seed},             {"--resume", !c.resume.empty()}};
}

int run(Config c) {
  if (c.threads > 0) omp_set_num_threads(int(c.threads));
  // --distributed: the ranks mpirun started share each global batch of --batch-size examples;
  // rank 0 alone prints and writes files (see README, "Data-parallel training").
  dist::Communicator* comm = c.distributed ? &dist::init() : nullptr;
  const bool root = !comm || comm->is_root();
  if (comm) {
    // First of all, before any collective whose size depends on them (framework/train/dist/settings_check.h).
    dist::check_same_settings(*comm, settings_of(c));
    EMBER_CHECK(c.batch_size % comm->world_size() == 0, "--batch-size ", c.batch_size, " is not a multiple of the ",
                comm->world_size(), " ranks (expected the global batch, split evenly between them)");
    if (!root) {
      c.progress = false;
      EMBER_CHECK(std::freopen("/dev/null", "w", stdout), "cannot silence rank ", comm->rank(), "'s standard output");
    }
  }
  // ---- data ----
  data::FashionMnistOptions dopt;
  dopt.dir = c.data_dir;
  dopt.limit = c.limit;
  auto t0 = Clock::now();
  std::shared_ptr<data::TensorDataset> full_train = data::load_fashion_mnist(true, dopt);
  std::shared_ptr<data::TensorDataset> test = data::load_fashion_mnist(false, dopt);
  EMBER_CHECK(c.val_size >= 0 && c.val_size < full_train->size(), "--val-size ", c.val_size, " must be in [0, ",
              full_train->size(), ")");
  auto [train, val] = data::random_split(full_train, full_train->size() - c.val_size, c.seed ^ 0x5b117);
  std::printf("Fashion-MNIST from %s: %lld training, %lld validation, %lld test images (loaded in %.1fs)\n",
              c.data_dir.c_str(), (long long)train->size(), (long long)val->size(), (long long)test->size(),
              std::chrono::duration<double>(Clock::now() - t0).count());

  // ---- model and optimizer ----
  std::vector<int64_t> sizes = {full_train->inputs().size(1)};
  sizes.insert(sizes.end(), c.hidden.begin(), c.hidden.end());
  sizes.push_back(10);
  nn::MLPOptions mopt;
  mopt.activation = nn::parse_activation(c.activation);
  mopt.dropout = c.dropout;
  mopt.init = nn::parse_init(c.init);
  mopt.seed = c.seed;
  std::shared_ptr<nn::Sequential> model;
  if (c.model == "cnn") {
    examples::CnnOptions copt;
    copt.seed = c.seed;
    model = examples::make_cnn(copt);
    sizes = {1, 28, 28, copt.channels1, copt.channels2, 10};  // input shape, channels, classes
  } else {
    model = nn::make_mlp(sizes, mopt);
  }
  std::printf("%s\n", model->describe().c_str());

  std::unique_ptr<optim::Optimizer> opt;
  if (c.optimizer == "sgd") {
    opt = std::make_unique<optim::SGD>(model->parameters(), optim::SGDOptions{c.lr, c.momentum, c.nesterov, c.weight_decay});
  } else if (c.optimizer == "adam" || c.optimizer == "adamw") {
    optim::AdamOptions ao;
    ao.lr = c.lr;
    ao.weight_decay = c.weight_decay;
    if (c.optimizer == "adam") opt = std::make_unique<optim::Adam>(model->parameters(), ao);
    else opt = std::make_unique<optim::AdamW>(model->parameters(), ao);
  } else {
    throw Error(str("--optimizer: unknown '", c.optimizer, "' (expected sgd, adam or adamw)"));
  }

  data::DataLoader loader(train, {c.batch_size, true, true, c.seed});
  const int64_t steps_per_epoch = loader.num_batches();
  EMBER_CHECK(steps_per_epoch > 0, "--batch-size ", c.batch_size, " is larger than the training set (", train->size(), ")");
  optim::LrSchedule sched;
  sched.kind = optim::parse_lr_schedule(c.schedule);
  sched.base_lr = c.lr;
  sched.total_steps = c.epochs * steps_per_epoch;
  // Short runs (--limit, few epochs) would spend all their steps warming up: cap it at a fifth.
  sched.warmup_steps = std::min(c.warmup_steps, sched.total_steps / 5);
  sched.min_lr = c.min_lr;
  sched.step_size = std::max<int64_t>(1, steps_per_epoch * std::max<int64_t>(1, c.epochs / 3));
  sched.validate();

  make_dirs(c.out_dir);
  const std::string ckpt_path = c.out_dir + "/checkpoint.safetensors";
  for (const char* f : {"/checkpoint.safetensors", "/metrics.csv", "/metrics.json", "/model.safetensors"})
    if (root) io::remove_stale_temp_files(c.out_dir + f);  // left by a run killed while writing
  json config = {{"model", c.model},          {"hidden", c.hidden},         {"sizes", sizes},           {"activation", c.activation},
                 {"init", c.init},             {"optimizer", c.optimizer}, {"lr", c.lr},
                 {"min_lr", c.min_lr},         {"schedule", c.schedule},   {"warmup_steps", sched.warmup_steps},
                 {"weight_decay", c.weight_decay}, {"momentum", c.momentum}, {"nesterov", c.nesterov},
                 {"dropout", c.dropout},       {"clip_grad_norm", c.clip}, {"epochs", c.epochs},
                 {"batch_size", c.batch_size}, {"val_size", c.val_size},   {"seed", c.seed},
                 {"limit", c.limit},           {"threads", omp_get_max_threads()},
                 {"world_size", comm ? comm->world_size() : 1}};
  json epochs = json::array();
  int64_t start_epoch = 0, step = 0;
  if (!c.resume.empty()) {
    io::CheckpointInfo info = io::load_checkpoint(c.resume, *model, *opt);
    step = info.step;
    examples::ResumeState rs = examples::parse_resume(info.metadata, step, c.epochs, steps_per_epoch, c.resume);
    start_epoch = rs.epoch;
    epochs = rs.metrics;
    std::printf("resumed from %s at epoch %lld, step %lld\n", c.resume.c_str(), (long long)start_epoch, (long long)step);
  }
  // After the resume: every rank read the checkpoint, and the wrapper broadcasts rank 0's parameters.
  std::unique_ptr<dist::DataParallel> ddp;
  std::unique_ptr<dist::ShardedSampler> sampler;
  if (comm) {
    ddp = std::make_unique<dist::DataParallel>(*model, *comm);
    sampler = std::make_unique<dist::ShardedSampler>(loader, comm->rank(), comm->world_size());
    std::printf("data-parallel on %d ranks (%s): %lld examples per rank of each batch of %lld, %lld gradient buckets\n",
                comm->world_size(), comm->backend_name(Device::CPU).c_str(),
                (long long)(c.batch_size / comm->world_size()), (long long)c.batch_size, (long long)ddp->num_buckets());
  }

  std::printf("\n%5s %8s %10s %9s %9s %9s %9s %8s %10s\n", "epoch", "step", "lr", "loss", "acc", "val_loss", "val_acc",
              "time", "samples/s");
  for (int64_t epoch = start_epoch; epoch < c.epochs; ++epoch) {
    examples::ProgressBar bar(str("epoch ", epoch + 1, "/", c.epochs), steps_per_epoch, c.progress);
    auto e0 = Clock::now();
    double loss_sum = 0;
    int64_t correct = 0, seen = 0, i = 0;
    if (ddp) ddp->reset_stats();
    const std::vector<int64_t> order = loader.order(epoch);
    for (int64_t bi = 0; bi < steps_per_epoch; ++bi) {
      const data::Batch b = sampler ? sampler->batch(order, bi) : loader.batch(order, bi);
      opt->set_lr(sched(step));
      Tensor logits = (*model)(b.inputs);
      Tensor loss = cross_entropy(logits, b.targets);
      opt->zero_grad();
      if (ddp) ddp->backward(loss);
      else loss.backward();
      if (c.clip > 0) optim::clip_grad_norm(opt->params(), c.clip);
      opt->step();
      ++step;
      ++i;
      int64_t bs = b.targets.numel();
      loss_sum += loss.item() * double(bs);
      Tensor pred = argmax(logits.detach(), 1);
      const int64_t* p = pred.data<int64_t>();
      const int64_t* y = b.targets.data<int64_t>();
      for (int64_t k = 0; k < bs; ++k) correct += p[k] == y[k];
      seen += bs;
      char status[96];
      std::snprintf(status, sizeof status, "loss %.4f acc %.4f", loss_sum / double(seen), double(correct) / double(seen));
      bar.update(i, seen, status);
    }
    if (comm) {  // the epoch's loss and accuracy over all ranks' examples
      Tensor totals = from_vector(std::vector<double>{loss_sum, double(correct), double(seen)});
      comm->all_reduce(totals);
      loss_sum = totals.at({0}), correct = int64_t(totals.at({1})), seen = int64_t(totals.at({2}));
    }
    double secs = std::chrono::duration<double>(Clock::now() - e0).count();
    char status[96];
    std::snprintf(status, sizeof status, "loss %.4f acc %.4f", loss_sum / double(seen), double(correct) / double(seen));
    bar.finish(status);
    EvalResult v = val->size() ? evaluate(*model, val, c.eval_batch, 10) : EvalResult{};
    json row = {{"epoch", epoch + 1},
                {"step", step},
                {"lr", opt->lr()},
                {"train_loss", loss_sum / double(seen)},
                {"train_accuracy", double(correct) / double(seen)},
                {"val_loss", val->size() ? json(v.loss) : json(nullptr)},
                {"val_accuracy", val->size() ? json(v.accuracy) : json(nullptr)},
                {"epoch_seconds", secs},
                {"samples_per_second", double(seen) / secs}};
    if (ddp) row["gradient_sync_seconds"] = ddp->stats().sync_seconds;
    epochs.push_back(row);
    std::printf("%5lld %8lld %10.3g %9.4f %9.4f %9.4f %9.4f %7.1fs %10.0f\n", (long long)(epoch + 1), (long long)step,
                opt->lr(), loss_sum / double(seen), double(correct) / double(seen), v.loss, v.accuracy, secs,
                double(seen) / secs);
    if (ddp)
      std::printf("      gradient averaging on rank 0: %.3fs of %.1fs (%.1f%%), %.3f ms per step, %.3f ms waiting\n",
                  ddp->stats().sync_seconds, secs, 100 * ddp->stats().sync_seconds / secs,
                  1e3 * ddp->stats().sync_seconds / double(steps_per_epoch),
                  1e3 * ddp->stats().wait_seconds / double(steps_per_epoch));
    std::fflush(stdout);
    // The checkpoint first: metrics.csv never lists an epoch that a resumed run would train again.
    // Rank 0 alone writes: every rank holds the same model and optimizer state.
    if (root) {
      io::save_checkpoint(ckpt_path, *model, *opt, step, {{"epoch", std::to_string(epoch + 1)}, {"metrics", epochs.dump()}});
      write_text(c.out_dir + "/metrics.csv", metrics_csv(epochs));
    }
    if (c.stop_after > 0 && epoch + 1 == c.stop_after && epoch + 1 < c.epochs) {
      std::printf("\nstopped after epoch %lld of %lld; continue with --resume %s (and the same options)\n",
                  (long long)(epoch + 1), (long long)c.epochs, ckpt_path.c_str());
      return 0;
    }
  }

  if (!root) return 0;
  // ---- test ----
  EvalResult t = evaluate(*model, test, c.eval_batch, 10);
  std::printf("\ntest: loss %.4f, accuracy %.2f%% on %lld images\n\n%-12s %9s\n", t.loss, 100 * t.accuracy,
              (long long)test->size(), "class", "accuracy");
  json per_class = json::object();
  for (size_t k = 0; k < 10; ++k) {
    double a = t.count_per_class[k] ? double(t.correct_per_class[k]) / double(t.count_per_class[k]) : 0;
    per_class[data::kFashionMnistClasses[k]] = a;
    std::printf("%-12s %8.1f%%\n", data::kFashionMnistClasses[k], 100 * a);
  }
  double total_secs = 0;
  for (const json& e : epochs) total_secs += e["epoch_seconds"].get<double>();
  json doc = {{"program", "train_classifier"},
              {"config", config},
              {"epochs", epochs},
              {"test", {{"loss", t.loss}, {"accuracy", t.accuracy}, {"per_class_accuracy", per_class}}},
              {"train_seconds", total_secs},
              {"seconds_per_epoch", epochs.empty() ? 0.0 : total_secs / double(epochs.size())}};
  io::Metadata md = {{"architecture", json(sizes).dump()}, {"activation", c.activation},
                     {"test_accuracy", std::to_string(t.accuracy)},
                     {"format", c.model == "cnn" ? "ember-cnn" : "ember-mlp"}};
  io::save_module(c.out_dir + "/model.safetensors", *model, md);
  bench::write_json(c.out_dir + "/metrics.json", doc);
  if (!c.json_path.empty()) bench::write_json(c.json_path, doc);
  std::printf("\nwrote %s/model.safetensors, metrics.csv, metrics.json, checkpoint.safetensors\n", c.out_dir.c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  cxxopts::Options options("train_classifier",
                           "Trains an MLP classifier on Fashion-MNIST (Debian package dataset-fashion-mnist) with Ember.\n"
                           "Progress on stderr, one row per epoch on stdout; writes model.safetensors, metrics.csv,\n"
                           "metrics.json and checkpoint.safetensors under --out.");
  // clang-format off
  options.add_options()
    ("data", "folder with the Fashion-MNIST IDX files", cxxopts::value<std::string>()->default_value(data::kFashionMnistDir))
    ("out", "output folder", cxxopts::value<std::string>()->default_value("results/classifier"))
    ("model", "mlp, or cnn: two blocks of 3x3 conv (32 and 64 channels), batch norm, ReLU and 2x2 max pool, then a "
              "linear layer (--hidden, --activation, --init and --dropout apply to the MLP only)",
     cxxopts::value<std::string>()->default_value("mlp"))
    ("hidden", "hidden layer sizes, comma-separated", cxxopts::value<std::string>()->default_value("256,128"))
    ("activation", "relu, gelu, tanh or sigmoid", cxxopts::value<std::string>()->default_value("relu"))
    ("init", "weight initialisation: kaiming, xavier or default (PyTorch's)", cxxopts::value<std::string>()->default_value("kaiming"))
    ("dropout", "dropout probability after each hidden layer", cxxopts::value<double>()->default_value("0"))
    ("epochs", "training epochs", cxxopts::value<int64_t>()->default_value("10"))
    ("stop-after", "stop after this epoch, keeping the checkpoint (continue later with --resume)", cxxopts::value<int64_t>()->default_value("0"))
    ("batch-size", "training batch size", cxxopts::value<int64_t>()->default_value("128"))
    ("optimizer", "sgd, adam or adamw", cxxopts::value<std::string>()->default_value("adamw"))
    ("lr", "peak learning rate", cxxopts::value<double>()->default_value("0.001"))
    ("min-lr", "final learning rate of the cosine schedule", cxxopts::value<double>()->default_value("0"))
    ("schedule", "learning-rate schedule: cosine, step or constant", cxxopts::value<std::string>()->default_value("cosine"))
    ("warmup-steps", "linear warm-up steps (at most a fifth of all steps)", cxxopts::value<int64_t>()->default_value("200"))
    ("weight-decay", "weight decay (decoupled for adamw, L2 for sgd and adam)", cxxopts::value<double>()->default_value("0.01"))
    ("momentum", "SGD momentum", cxxopts::value<double>()->default_value("0.9"))
    ("nesterov", "SGD with Nesterov momentum")
    ("clip-grad", "clip the gradient norm to this value (0: off)", cxxopts::value<double>()->default_value("0"))
    ("val-size", "training images held out for validation", cxxopts::value<int64_t>()->default_value("5000"))
    ("limit", "use only the first N images of each split (0: all), for quick runs", cxxopts::value<int64_t>()->default_value("0"))
    ("seed", "seed for initialisation, split and shuffling", cxxopts::value<uint64_t>()->default_value("0"))
    ("threads", "OpenMP threads; 0: OMP_NUM_THREADS or all cores. Default 1 for the MLP: at batch 128 its products are "
                "too small for a second thread to pay off, and on a busy machine threads stall at barriers (see README); "
                "default 2 for the CNN, whose images split evenly between threads",
     cxxopts::value<int64_t>()->default_value("1"))
    ("resume", "continue from this checkpoint (e.g. results/classifier/checkpoint.safetensors)", cxxopts::value<std::string>()->default_value(""))
    ("json", "also write the metrics document to this path", cxxopts::value<std::string>()->default_value(""))
    ("no-progress", "do not draw the progress bar")
    ("distributed", "data-parallel training on the ranks of mpirun (mpirun -np 2 train_classifier --distributed); "
                    "--batch-size is the global batch, split between the ranks")
    ("h,help", "show this help");
  // clang-format on
  try {
    auto r = cli::parse(options, argc, argv);
    if (r.count("help")) {
      std::cout << options.help() << "\nExample: train_classifier --epochs 10 --out results/classifier\n";
      return 0;
    }
    Config c;
    c.data_dir = r["data"].as<std::string>();
    c.out_dir = r["out"].as<std::string>();
    c.resume = r["resume"].as<std::string>();
    c.json_path = cli::output_path("--json", r["json"].as<std::string>());
    c.hidden = parse_sizes(r["hidden"].as<std::string>());
    c.activation = r["activation"].as<std::string>();
    c.init = r["init"].as<std::string>();
    c.optimizer = r["optimizer"].as<std::string>();
    c.schedule = r["schedule"].as<std::string>();
    // Every numeric flag is range-checked here, before the data is read (examples/common/cli_flags.h).
    c.epochs = cli::flag<int64_t>(r, "epochs", 1, 100000);
    c.stop_after = cli::flag<int64_t>(r, "stop-after", 0, c.epochs, str("0 (off) to --epochs (", c.epochs, ")"));
    c.batch_size = cli::flag<int64_t>(r, "batch-size", 1, int64_t(1) << 20);
    c.val_size = cli::flag<int64_t>(r, "val-size", 0, int64_t(1) << 30);
    c.warmup_steps = cli::flag<int64_t>(r, "warmup-steps", 0, int64_t(1) << 40);
    c.limit = cli::flag<int64_t>(r, "limit", 0, int64_t(1) << 40, "0 (all) or a positive image count");
    c.model = r["model"].as<std::string>();
    EMBER_CHECK(c.model == "mlp" || c.model == "cnn", "--model: unknown '", c.model, "' (expected mlp or cnn)");
    c.threads = cli::flag<int64_t>(r, "threads", 0, cli::kMaxThreads);
    if (c.model == "cnn" && r.count("threads") == 0) c.threads = 2;
    c.eval_batch = 1000;
    c.lr = cli::flag<double>(r, "lr", 1e-12, 10, "a learning rate from 1e-12 to 10");
    c.min_lr = cli::flag<double>(r, "min-lr", 0, c.lr, str("0 to --lr (", c.lr, ")"));
    c.weight_decay = cli::flag<double>(r, "weight-decay", 0, 10);
    c.momentum = cli::flag<double>(r, "momentum", 0, 1);
    c.dropout = cli::flag<double>(r, "dropout", 0, std::nextafter(1.0, 0.0), "a probability from 0 to below 1");
    c.clip = cli::flag<double>(r, "clip-grad", 0, 1e9, "0 (off) or a positive gradient norm");
    c.nesterov = r.count("nesterov") > 0;
    c.progress = r.count("no-progress") == 0;
    c.seed = r["seed"].as<uint64_t>();
    c.distributed = r.count("distributed") > 0;
    const int rc = run(c);
    dist::finalize();
    return rc;
  } catch (const cxxopts::exceptions::exception& e) {
    std::fprintf(stderr, "train_classifier: %s (see --help)\n", e.what());
    return 2;
  } catch (const Error& e) {
    std::fprintf(stderr, "train_classifier: error: %s\n", e.what());
    // The other ranks may be waiting in a collective for this one: end them all now.
    if (dist::initialized() && dist::world().world_size() > 1) dist::world().abort(1);
    return 1;
  }
}
