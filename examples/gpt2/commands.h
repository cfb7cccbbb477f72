// The `gpt2` program's subcommands; each parses its own flags (argv[0] is the subcommand).
#pragma once
#include <string>
#include <vector>

#include <cxxopts.hpp>

#include "framework/core/tensor.h"
#include "models/gpt2/config.h"
#include "models/gpt2/tokenizer.h"

namespace ember::gpt2::cli {

int generate(int argc, char** argv);
int tokenize(int argc, char** argv);
int train(int argc, char** argv);
int bench(int argc, char** argv);
int quality(int argc, char** argv);
int train_step(int argc, char** argv);

// "15496,11,995" -> ids; ember::Error on anything else.
std::vector<int64_t> parse_ids(const std::string& s);
std::string join_ids(const std::vector<int64_t>& ids);
// --layers, --heads and --embd (checked: heads divide the width), --bias and --gelu (structure.h)
// as a Config; the rest default.
Config model_shape(const cxxopts::ParseResult& a);

}  // namespace ember::gpt2::cli
