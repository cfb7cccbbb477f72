#include <cxxopts.hpp>
#include <iostream>

#include "commands.h"
#include "examples/common/cli_flags.h"

namespace ember::gpt2::cli {

int tokenize(int argc, char** argv) {
  cxxopts::Options o("gpt2 tokenize", "Print the GPT-2 token ids of a text on one line, or decode ids to text.");
  o.add_options()("model", "model folder holding vocab.json and merges.txt", cxxopts::value<std::string>())(
      "text", "text to encode", cxxopts::value<std::string>())(
      "decode", "comma-separated token ids to decode instead", cxxopts::value<std::string>())("h,help", "show this help");
  auto a = ember::cli::parse(o, argc, argv);
  if (a.count("help")) {
    std::cout << o.help() << "\n";
    return 0;
  }
  EMBER_CHECK(a.count("model"), "--model DIR is required (a folder with vocab.json and merges.txt)");
  EMBER_CHECK(a.count("text") + a.count("decode") == 1, "give exactly one of --text or --decode");
  Tokenizer tok = Tokenizer::from_dir(a["model"].as<std::string>());
  if (a.count("decode")) std::cout << tok.decode(parse_ids(a["decode"].as<std::string>())) << "\n";
  else std::cout << join_ids(tok.encode(a["text"].as<std::string>())) << "\n";
  return 0;
}

}  // namespace ember::gpt2::cli
