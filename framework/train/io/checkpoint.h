// Training checkpoints: the model's parameters, the optimizer's state and the step count in one
// safetensors file (tensors "model.<name>" and "optimizer.<name>", the rest in its metadata),
// written atomically. Loading checks the whole file against the model and the optimizer before
// it changes either, so a mismatched checkpoint leaves both as they were.
#pragma once
#include <string>

#include "framework/train/io/safetensors.h"
#include "framework/train/nn/module.h"
#include "framework/train/optim/optimizer.h"

namespace ember::io {

struct CheckpointInfo {
  int64_t step = 0;   // updates done when it was written
  Metadata metadata;  // the caller's extra entries (e.g. epoch), and "format", "optimizer", "step"
};

void save_checkpoint(const std::string& path, const nn::Module& model, const optim::Optimizer& opt, int64_t step,
                     const Metadata& extra = {});
CheckpointInfo load_checkpoint(const std::string& path, nn::Module& model, optim::Optimizer& opt);

}  // namespace ember::io
