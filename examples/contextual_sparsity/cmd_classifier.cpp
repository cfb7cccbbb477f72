// contextual_sparsity classifier: the Fashion-MNIST MLP with two forward passes per test image,
// dense and keeping only k units of each hidden layer (others zeroed): the k with the largest
// outputs for this image (contextual), the k with the largest mean output on the training set
// (static), or k at random per image.
#include <cstdio>
#include <cxxopts.hpp>
#include <iostream>

#include "common.h"
#include "examples/common/bench.h"
#include "examples/common/cli_flags.h"
#include "examples/common/cli_lists.h"
#include "framework/core/autograd/trace.h"
#include "framework/train/data/data_loader.h"
#include "framework/train/data/fashion_mnist.h"
#include "framework/train/io/safetensors.h"
#include "framework/train/nn/mlp.h"
#include "framework/train/optim/adam.h"
#include "models/sparsity/statistics.h"
#include "ops/elementwise/elementwise.h"
#include "models/sparsity/topk.h"
#include "ops/loss/cross_entropy.h"
#include "ops/reduce/reduce.h"
#include "examples/common/progress_bar.h"

namespace ember::study {
namespace {

using Clock = std::chrono::steady_clock;
// Replaces hidden layer `layer`'s activations (rows of one batch) by a sparsified copy.
using HiddenEdit = std::function<Tensor(size_t layer, const Tensor& acts)>;

// Runs the MLP layer by layer; after each hidden activation (every activation layer but a final
// one) `edit`, when given, decides what the next layer sees.
Tensor forward_edited(nn::Sequential& model, const Tensor& x, const HiddenEdit& edit) {
  Tensor h = x;
  size_t hidden = 0;
  for (size_t i = 0; i < model.size(); ++i) {
    h = model[i]->forward(h);
    if (edit && dynamic_cast<nn::ActivationLayer*>(model[i].get())) h = edit(hidden++, h);
  }
  return h;
}

std::vector<int64_t> hidden_sizes(nn::Sequential& model) {
  std::vector<int64_t> out;
  for (size_t i = 0; i + 1 < model.size(); ++i)
    if (auto* lin = dynamic_cast<nn::Linear*>(model[i].get()))
      if (i + 1 < model.size() && dynamic_cast<nn::ActivationLayer*>(model[i + 1].get())) out.push_back(lin->out_features);
  return out;
}

std::shared_ptr<nn::Sequential> load_classifier(const std::string& path) {
  io::Safetensors st = io::load_safetensors(path);
  EMBER_CHECK(st.metadata.count("architecture"), "--model: ", path,
              " has no 'architecture' metadata; expected a model.safetensors written by train_classifier");
  std::vector<int64_t> sizes = json::parse(st.metadata.at("architecture")).get<std::vector<int64_t>>();
  nn::MLPOptions mopt;
  mopt.activation = nn::parse_activation(st.metadata.count("activation") ? st.metadata.at("activation") : "relu");
  auto model = nn::make_mlp(sizes, mopt);
  model->load_state_dict(st.tensors);
  return model;
}

// The study's fixed recipe, so that one command reproduces everything: AdamW (lr 1e-3, weight
// decay 0.01), batch 128, constant rate, seed 0, on all 60000 training images.
std::shared_ptr<nn::Sequential> train_classifier(const std::shared_ptr<data::TensorDataset>& train,
                                                 const std::vector<int64_t>& hidden, int64_t epochs, bool progress) {
  std::vector<int64_t> sizes = {train->inputs().size(1)};
  sizes.insert(sizes.end(), hidden.begin(), hidden.end());
  sizes.push_back(10);
  nn::MLPOptions mopt;  // ReLU, Kaiming-uniform initialisation, no dropout
  auto model = nn::make_mlp(sizes, mopt);
  optim::AdamW opt(model->parameters(), optim::adamw_defaults());
  data::DataLoader loader(train, {128, true, true, 0});
  for (int64_t e = 0; e < epochs; ++e) {
    examples::ProgressBar bar(str("train epoch ", e + 1, "/", epochs), loader.num_batches(), progress);
    double sum = 0;
    int64_t seen = 0, i = 0;
    for (const data::Batch& b : loader.epoch(e)) {
      Tensor loss = cross_entropy((*model)(b.inputs), b.targets);
      opt.zero_grad();
      loss.backward();
      opt.step();
      sum += loss.item() * double(b.targets.numel());
      seen += b.targets.numel();
      bar.update(++i, seen, str("loss ", sum / double(seen)));
    }
    bar.finish(str("loss ", sum / double(seen)));
  }
  model->eval();
  return model;
}

struct Score {
  int64_t correct = 0, agree = 0;
};

}  // namespace

int classifier(int argc, char** argv) {
  cxxopts::Options o("contextual_sparsity classifier",
                     "Contextual sparsity in the Fashion-MNIST MLP: for each test image, keep only k units of every "
                     "hidden layer (zero the rest) and compare the prediction with the dense one.\n"
                     "  contextual: the k units with the largest outputs for this image\n"
                     "  static:     the k units with the largest mean output over the training images\n"
                     "  random:     k units drawn at random for each image and layer\n"
                     "Without --model it first trains the MLP with a fixed recipe (AdamW, batch 128, seed 0).");
  o.add_options()("model", "a model.safetensors written by train_classifier (default: train one here)",
                  cxxopts::value<std::string>()->default_value(""))(
      "data", "folder of the Fashion-MNIST IDX files", cxxopts::value<std::string>()->default_value(data::kFashionMnistDir))(
      "hidden", "hidden sizes when training here", cxxopts::value<std::string>()->default_value("256,128"))(
      "epochs", "training epochs when training here", cxxopts::value<int64_t>()->default_value("4"))(
      "fractions", "k/n values (default: 13 log-spaced from 1% to 100%)", cxxopts::value<std::string>()->default_value(""))(
      "seed", "seed of the random baseline", cxxopts::value<uint64_t>()->default_value("1"))(
      "json", "write the results to this file", cxxopts::value<std::string>()->default_value(""))(
      "no-progress", "do not draw progress bars")("h,help", "show this help");
  auto a = ember::cli::parse(o, argc, argv);
  if (a.count("help")) {
    std::cout << o.help() << "\nExample: contextual_sparsity classifier --json results/sparsity_classifier.json\n";
    return 0;
  }
  const bool progress = !a.count("no-progress");
  const std::vector<double> fractions = a["fractions"].as<std::string>().empty()
                                            ? log_spaced(0.01, 1.0, 13)
                                            : parse_fractions(a["fractions"].as<std::string>(), "--fractions");
  // The training flags are checked before the data is read, also when --model makes them unused.
  const int64_t epochs = ember::cli::flag<int64_t>(a, "epochs", 1, 10000);
  const std::vector<int64_t> hidden =
      ember::cli::int_list(a["hidden"].as<std::string>(), "--hidden", "hidden sizes such as 256,128");
  EMBER_CHECK(!hidden.empty(), "--hidden: no sizes given (expected hidden sizes such as 256,128)");
  for (int64_t h : hidden) ember::cli::in_range<int64_t>("--hidden", h, 1, 1 << 20, "hidden sizes from 1 to 1048576");
  ember::cli::output_path("--json", a["json"].as<std::string>());
  auto t_start = Clock::now();
  data::FashionMnistOptions dopt;
  dopt.dir = a["data"].as<std::string>();
  auto train = data::load_fashion_mnist(true, dopt);
  auto test = data::load_fashion_mnist(false, dopt);
  std::printf("Fashion-MNIST: %lld training, %lld test images\n", (long long)train->size(), (long long)test->size());

  std::shared_ptr<nn::Sequential> model;
  std::string model_source = a["model"].as<std::string>();
  if (!model_source.empty()) {
    model = load_classifier(model_source);
  } else {
    model = train_classifier(train, hidden, epochs, progress);
    model_source = str("trained here: hidden ", a["hidden"].as<std::string>(), ", ", epochs, " epochs, AdamW lr 1e-3");
  }
  model->eval();
  autograd::NoGradGuard ng;
  std::vector<int64_t> widths = hidden_sizes(*model);
  EMBER_CHECK(!widths.empty(), "the classifier has no hidden activation layer");
  std::printf("model: %s\n%s\n", model_source.c_str(), model->describe().c_str());

  // Static selection: mean activation of each hidden unit over the training images (dense passes).
  std::vector<sparsity::ActivationMeans> means;
  for (int64_t w : widths) means.emplace_back(w);
  data::DataLoader train_loader(train, {2000, false, false, 0});
  for (const data::Batch& b : train_loader.epoch(0))
    forward_edited(*model, b.inputs, [&](size_t l, const Tensor& h) { means[l].add(h); return h; });

  // Dense predictions and each layer's share of exactly-zero activations (ReLU's own sparsity).
  const int64_t eval_batch = 1000;
  data::DataLoader test_loader(test, {eval_batch, false, false, 0});
  std::vector<Tensor> dense_pred;
  std::vector<double> zero_share(widths.size(), 0.0);
  int64_t dense_correct = 0;
  for (const data::Batch& b : test_loader.epoch(0)) {
    Tensor logits = forward_edited(*model, b.inputs, [&](size_t l, const Tensor& h) {
      std::vector<float> v = h.to_vector<float>();
      for (float x : v) zero_share[l] += x == 0.0f;
      return h;
    });
    Tensor p = argmax(logits, 1);
    dense_pred.push_back(p);
    std::vector<int64_t> pv = p.to_vector<int64_t>(), yv = b.targets.to_vector<int64_t>();
    for (size_t i = 0; i < pv.size(); ++i) dense_correct += pv[i] == yv[i];
  }
  const double n_test = double(test->size());
  for (size_t l = 0; l < widths.size(); ++l) zero_share[l] /= n_test * double(widths[l]);
  std::printf("\ndense test accuracy %.2f%%; exactly-zero hidden activations per layer:", 100 * dense_correct / n_test);
  for (double z : zero_share) std::printf(" %.1f%%", 100 * z);
  std::printf("\n\n");

  const char* methods[3] = {"contextual", "static", "random"};
  json rows = json::array();
  std::printf("%7s %-11s | %-17s | %-17s | %-17s\n", "", "", "contextual top-k", "static top-k", "random k");
  std::printf("%7s %-11s | %8s %8s | %8s %8s | %8s %8s\n", "k/n", "k per layer", "acc", "agree", "acc", "agree", "acc", "agree");
  examples::ProgressBar bar("sweep", int64_t(fractions.size()), progress);
  for (size_t fi = 0; fi < fractions.size(); ++fi) {
    std::vector<int64_t> ks;
    std::string ks_text;
    for (int64_t w : widths) {
      ks.push_back(sparsity::k_for_fraction(fractions[fi], w));
      ks_text += (ks_text.empty() ? "" : "/") + std::to_string(ks.back());
    }
    std::vector<std::vector<int64_t>> static_sets;
    for (size_t l = 0; l < widths.size(); ++l) static_sets.push_back(means[l].top(ks[l]));
    Generator gen(a["seed"].as<uint64_t>() * 7919 + fi);
    Score score[3];
    int64_t bi = 0;
    for (const data::Batch& b : test_loader.epoch(0)) {
      std::vector<int64_t> yv = b.targets.to_vector<int64_t>(), dv = dense_pred[size_t(bi++)].to_vector<int64_t>();
      for (int m = 0; m < 3; ++m) {
        Tensor logits = forward_edited(*model, b.inputs, [&](size_t l, const Tensor& h) {
          if (m == 0) return sparsity::keep_topk(h, ks[l]);
          Tensor mask = m == 1 ? sparsity::mask_from_indices(h.shape(), static_sets[l]) : sparsity::random_mask(h.shape(), ks[l], gen);
          return h * mask;
        });
        std::vector<int64_t> pv = argmax(logits, 1).to_vector<int64_t>();
        for (size_t i = 0; i < pv.size(); ++i) {
          score[m].correct += pv[i] == yv[i];
          score[m].agree += pv[i] == dv[i];
        }
      }
    }
    json row = {{"fraction", fractions[fi]}, {"k", ks}};
    std::printf("%6.1f%% %-11s", 100 * fractions[fi], ks_text.c_str());
    for (int m = 0; m < 3; ++m) {
      double acc = double(score[m].correct) / n_test, agree = double(score[m].agree) / n_test;
      row[methods[m]] = {{"accuracy", acc}, {"agreement", agree}};
      std::printf(" | %7.2f%% %7.2f%%", 100 * acc, 100 * agree);
    }
    std::printf("\n");
    std::fflush(stdout);
    rows.push_back(row);
    bar.update(int64_t(fi + 1), int64_t(fi + 1), str("k/n ", fractions[fi]));
  }
  bar.finish("done");
  double secs = seconds_since(t_start);
  std::printf("\nacc: test accuracy; agree: share of test images whose sparse prediction equals the dense one.\n"
              "%.0f s on %s\n", secs, ember::bench::cpu_name().c_str());
  if (!a["json"].as<std::string>().empty()) {
    json doc = {{"program", "contextual_sparsity"},
                {"command", "classifier"},
                {"model", model_source},
                {"hidden_widths", widths},
                {"dense_accuracy", double(dense_correct) / n_test},
                {"zero_activation_share", zero_share},
                {"test_images", test->size()},
                {"rows", rows},
                {"seconds", secs},
                {"cpu", ember::bench::cpu_name()}};
    write_json(a["json"].as<std::string>(), doc);
    std::printf("wrote %s\n", a["json"].as<std::string>().c_str());
  }
  return 0;
}

}  // namespace ember::study
