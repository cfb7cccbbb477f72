// A byte-level text corpus for training small GPTs: files concatenated, split into a training and
// a validation part by position, and random windows drawn as (input, next-token target) batches.
#pragma once
#include <string>
#include <vector>

#include "framework/core/tensor.h"

namespace ember::gpt2 {

class TextCorpus {
 public:
  // Every regular file directly in `dir` except fortune's index files (*.dat) and UTF-8 duplicates
  // (*.u8), in name order. ember::Error names the Debian package when the folder is missing.
  static TextCorpus from_fortunes(const std::string& dir, double val_fraction = 0.1);
  static TextCorpus from_text(const std::string& text, double val_fraction = 0.1);

  // (inputs, targets), both int64 (batch, context): targets are inputs shifted by one byte.
  std::pair<Tensor, Tensor> batch(bool validation, int64_t batch, int64_t context, Generator& gen) const;
  // Cross-entropy (nats per byte) of the training part's byte frequencies on the validation part:
  // the baseline a model must beat.
  double unigram_loss() const;
  size_t train_bytes() const { return train_.size(); }
  size_t val_bytes() const { return val_.size(); }
  // The two parts as text, for evaluations that tokenise them otherwise or cut their own windows.
  const std::string& train_text() const { return train_; }
  const std::string& val_text() const { return val_; }

 private:
  std::string train_, val_;
};

}  // namespace ember::gpt2
