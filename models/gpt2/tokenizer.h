// GPT-2's byte-level BPE tokenizer. Text is split by GPT-2's pre-tokenisation pattern
// (contractions, letters, numbers, other symbols, whitespace; Unicode-aware through PCRE2),
// each piece's bytes are mapped to printable characters, and merges are applied by rank.
// Encoding then decoding returns the exact input bytes, also for invalid UTF-8.
#pragma once
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace ember::gpt2 {

class Tokenizer {
 public:
  // Reads a Hugging Face GPT-2 folder's vocab.json and merges.txt. Throws ember::Error on a
  // missing or malformed file, naming it.
  static Tokenizer from_files(const std::string& vocab_json, const std::string& merges_txt);
  static Tokenizer from_dir(const std::string& dir);  // dir/vocab.json, dir/merges.txt
  // From in-memory contents (tests, and files already read).
  static Tokenizer from_strings(const std::string& vocab_json, const std::string& merges_txt);

  std::vector<int64_t> encode(const std::string& text) const;
  std::string decode(const std::vector<int64_t>& ids) const;  // throws on an unknown id
  std::string token(int64_t id) const;                        // one token's bytes
  int64_t vocab_size() const { return int64_t(id_to_bytes_.size()); }
  int64_t eot_id() const { return eot_id_; }  // "<|endoftext|>", or -1 when the vocabulary has none
  // ember::Error unless every id a model with `model_vocab` outputs has a token here: checked when
  // a model and its tokenizer are loaded together, rather than failing mid-generation.
  void check_covers(int64_t model_vocab, const std::string& what) const;

  // The pre-tokenisation split alone (exposed for tests and the study).
  std::vector<std::string> pretokenize(const std::string& text) const;

 private:
  std::vector<std::string> bpe(const std::string& piece) const;  // symbols in byte-unicode form
  // Appends the ids of text that holds no special token.
  void encode_ordinary(const std::string& text, std::vector<int64_t>& ids) const;
  std::vector<bool> has_id_;                                      // id -> listed in vocab.json
  std::unordered_map<std::string, int64_t> vocab_;                // byte-unicode token -> id
  std::vector<std::string> id_to_bytes_;                          // id -> raw bytes
  std::unordered_map<std::string, int> merge_rank_;               // "a b" -> rank
  int64_t eot_id_ = -1;
  mutable std::unordered_map<std::string, std::vector<int64_t>> cache_;
};

// The byte <-> printable-character table GPT-2 uses so that BPE never sees control bytes:
// printable Latin-1 bytes map to themselves, the rest to U+0100 onwards. Returned as UTF-8.
const std::vector<std::string>& byte_to_unicode();

}  // namespace ember::gpt2
