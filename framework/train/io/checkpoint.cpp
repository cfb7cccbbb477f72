#include "framework/train/io/checkpoint.h"

#include "framework/core/autograd/trace.h"

namespace ember::io {

namespace {
constexpr const char* kFormat = "ember-checkpoint-1";
const std::string kModel = "model.", kOptim = "optimizer.";

bool starts_with(const std::string& s, const std::string& p) { return s.compare(0, p.size(), p) == 0; }
}  // namespace

void save_checkpoint(const std::string& path, const nn::Module& model, const optim::Optimizer& opt, int64_t step,
                     const Metadata& extra) {
  NamedTensors all;
  for (auto& [n, t] : model.state_dict()) all.emplace_back(kModel + n, t);
  for (auto& [n, t] : opt.state_dict()) all.emplace_back(kOptim + n, t);
  Metadata md = extra;
  md["format"] = kFormat;
  md["optimizer"] = opt.kind();
  md["step"] = std::to_string(step);
  save_safetensors(path, all, md);
}

CheckpointInfo load_checkpoint(const std::string& path, nn::Module& model, optim::Optimizer& opt) {
  Safetensors st = load_safetensors(path);
  const Metadata& md = st.metadata;
  auto get = [&](const char* key) {
    auto it = md.find(key);
    EMBER_CHECK(it != md.end(), "load_checkpoint '", path, "': metadata '", key, "' is missing (not an Ember checkpoint?)");
    return it->second;
  };
  EMBER_CHECK(get("format") == kFormat, "load_checkpoint '", path, "': format '", get("format"), "', expected '", kFormat, "'");
  EMBER_CHECK(get("optimizer") == opt.kind(), "load_checkpoint '", path, "': written by optimizer '", get("optimizer"),
              "' but this optimizer is '", opt.kind(), "'");
  CheckpointInfo info;
  try {
    size_t used = 0;
    info.step = std::stoll(get("step"), &used);
    EMBER_CHECK(used == get("step").size() && info.step >= 0, "");
  } catch (const std::exception&) {
    throw Error(str("load_checkpoint '", path, "': metadata 'step' is not a non-negative integer: '", get("step"), "'"));
  }
  info.metadata = md;

  NamedTensors model_state, optim_state;
  for (auto& [n, t] : st.tensors) {
    if (starts_with(n, kModel)) model_state.emplace_back(n.substr(kModel.size()), t);
    else if (starts_with(n, kOptim)) optim_state.emplace_back(n.substr(kOptim.size()), t);
    else throw Error(str("load_checkpoint '", path, "': tensor '", n, "' belongs to neither the model nor the optimizer"));
  }
  // The metadata's step and the optimizer's must agree: a file where they differ was altered, and
  // a caller that schedules by info.step would run a schedule the optimizer is not at.
  for (auto& [n, t] : optim_state)
    if (n == "step" && t.dtype() == DType::Int64 && t.numel() == 1) {
      const int64_t opt_step = *t.to(Device::CPU).contiguous().data<int64_t>();
      EMBER_CHECK(opt_step == info.step, "load_checkpoint '", path, "': metadata 'step' is ", info.step,
                  " but the optimizer's state says ", opt_step, " (expected the same update count)");
    }
  // The model first (its errors name the parameter), keeping a copy of its values: if the
  // optimizer then refuses its part of the file, the model is put back as it was.
  NamedTensors backup;
  for (auto& [n, t] : model.state_dict()) backup.emplace_back(n, t.clone());
  try {
    model.load_state_dict(model_state);
  } catch (const Error& e) {
    throw Error(str("load_checkpoint '", path, "': ", e.what()));
  }
  try {
    opt.load_state_dict(optim_state);
  } catch (const Error& e) {
    model.load_state_dict(backup);
    throw Error(str("load_checkpoint '", path, "': ", e.what()));
  }
  return info;
}

}  // namespace ember::io
