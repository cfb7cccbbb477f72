// Training checkpoints: load_checkpoint into a small model and optimizer, then the metadata
// checks train_classifier and gpt2 train apply before resuming. Each accepts or raises ember::Error.
#include "examples/classifier/resume.h"
#include "examples/gpt2/train_resume.h"
#include "framework/train/io/checkpoint.h"
#include "framework/train/nn/linear.h"
#include "framework/train/optim/sgd.h"
#include "fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string& path = ember::fuzz::scratch_path(".ckpt.safetensors");
  ember::fuzz::write_file(path, data, size);
  ember::Generator gen(1);
  ember::nn::Linear model(2, 2, gen);
  ember::optim::SGD opt(model.parameters(), ember::optim::SGDOptions{0.1, 0.0, false, 0.0});
  ember::fuzz::refused_ok([&] {
    ember::io::CheckpointInfo info = ember::io::load_checkpoint(path, model, opt);
    // Both readers see the same metadata: a refusal by the first must not hide the second.
    ember::fuzz::refused_ok([&] { ember::examples::parse_resume(info.metadata, info.step, 5, 3, path); });
    const nlohmann::json settings = {{"--seed", 0}, {"--steps", 5}, {"--lr", 0.1}};
    ember::gpt2::cli::parse_train_resume(info.metadata, info.step, settings, 5, 3, path);
  });
  return 0;
}
