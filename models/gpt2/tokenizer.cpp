#include "models/gpt2/tokenizer.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <fstream>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>

#include "framework/core/error.h"

namespace ember::gpt2 {
namespace {

std::string utf8(uint32_t cp) {
  std::string s;
  if (cp < 0x80) {
    s += char(cp);
  } else if (cp < 0x800) {
    s += char(0xC0 | (cp >> 6));
    s += char(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    s += char(0xE0 | (cp >> 12));
    s += char(0x80 | ((cp >> 6) & 0x3F));
    s += char(0x80 | (cp & 0x3F));
  } else {
    s += char(0xF0 | (cp >> 18));
    s += char(0x80 | ((cp >> 12) & 0x3F));
    s += char(0x80 | ((cp >> 6) & 0x3F));
    s += char(0x80 | (cp & 0x3F));
  }
  return s;
}

// Length of the valid UTF-8 sequence starting at s[i], or 0 when the bytes there are invalid.
size_t utf8_len(const std::string& s, size_t i) {
  unsigned char c = static_cast<unsigned char>(s[i]);
  size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
  if (n == 0 || i + n > s.size()) return 0;
  uint32_t cp = n == 1 ? c : n == 2 ? (c & 0x1F) : n == 3 ? (c & 0x0F) : (c & 0x07);
  for (size_t k = 1; k < n; ++k) {
    unsigned char d = static_cast<unsigned char>(s[i + k]);
    if ((d >> 6) != 0x2) return 0;
    cp = (cp << 6) | (d & 0x3F);
  }
  static const uint32_t min_cp[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < min_cp[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;  // overlong, surrogate
  return n;
}

// Splits a UTF-8 string into its characters (each a UTF-8 substring); input must be valid.
std::vector<std::string> chars_of(const std::string& s) {
  std::vector<std::string> out;
  for (size_t i = 0; i < s.size();) {
    size_t n = utf8_len(s, i);
    EMBER_CHECK(n > 0, "tokenizer: invalid UTF-8 in a vocabulary or merges entry");
    out.push_back(s.substr(i, n));
    i += n;
  }
  return out;
}

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  EMBER_CHECK(f.good(), "tokenizer: cannot open '", path, "'");
  std::ostringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// GPT-2's pattern: contractions, optional space + letters / numbers / other symbols, then whitespace
// not followed by non-whitespace (so the space before a word stays with the word), then whitespace.
constexpr const char* kPattern =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

struct Regex {
  pcre2_code* code = nullptr;
  Regex() {
    int err = 0;
    PCRE2_SIZE off = 0;
    code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(kPattern), PCRE2_ZERO_TERMINATED, PCRE2_UTF | PCRE2_UCP, &err,
                         &off, nullptr);
    EMBER_CHECK(code, "tokenizer: the pre-tokenisation pattern failed to compile (PCRE2 error ", err, ")");
  }
  ~Regex() { pcre2_code_free(code); }
};

const Regex& regex() {
  static Regex r;
  return r;
}

// Runs the pattern over a valid UTF-8 run, appending each match.
void split_valid(const std::string& s, std::vector<std::string>& out) {
  pcre2_match_data* md = pcre2_match_data_create_from_pattern(regex().code, nullptr);
  std::unique_ptr<pcre2_match_data, decltype(&pcre2_match_data_free)> guard(md, pcre2_match_data_free);
  PCRE2_SIZE pos = 0;
  while (pos < s.size()) {
    int rc = pcre2_match(regex().code, reinterpret_cast<PCRE2_SPTR>(s.data()), s.size(), pos, PCRE2_NO_UTF_CHECK, md,
                         nullptr);
    EMBER_CHECK(rc > 0, "tokenizer: the pre-tokenisation pattern found no match at byte ", pos);
    PCRE2_SIZE* ov = pcre2_get_ovector_pointer(md);
    EMBER_CHECK(ov[1] > ov[0] && ov[0] == pos, "tokenizer: unexpected empty or skipping match at byte ", pos);
    out.push_back(s.substr(ov[0], ov[1] - ov[0]));
    pos = ov[1];
  }
}

}  // namespace

const std::vector<std::string>& byte_to_unicode() {
  static const std::vector<std::string> table = [] {
    std::vector<std::string> t(256);
    uint32_t next = 256;
    for (int b = 0; b < 256; ++b) {
      bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
      t[size_t(b)] = utf8(printable ? uint32_t(b) : next++);
    }
    return t;
  }();
  return table;
}

Tokenizer Tokenizer::from_files(const std::string& vocab_json, const std::string& merges_txt) {
  return from_strings(read_file(vocab_json), read_file(merges_txt));
}

Tokenizer Tokenizer::from_dir(const std::string& dir) { return from_files(dir + "/vocab.json", dir + "/merges.txt"); }

Tokenizer Tokenizer::from_strings(const std::string& vocab_json, const std::string& merges_txt) {
  Tokenizer t;
  std::unordered_map<std::string, int> unicode_to_byte;
  for (int b = 0; b < 256; ++b) unicode_to_byte[byte_to_unicode()[size_t(b)]] = b;

  nlohmann::json j;
  try {
    j = nlohmann::json::parse(vocab_json);
  } catch (const std::exception& e) {
    throw Error(str("tokenizer: vocab.json is not valid JSON: ", e.what()));
  }
  EMBER_CHECK(j.is_object() && !j.empty(), "tokenizer: vocab.json must be a non-empty object of token -> id");
  int64_t max_id = -1;
  for (auto& [tok, id] : j.items()) {
    EMBER_CHECK(id.is_number_integer() && id.get<int64_t>() >= 0, "tokenizer: vocab.json id of '", tok,
                "' is not a non-negative integer");
    max_id = std::max(max_id, id.get<int64_t>());
  }
  EMBER_CHECK(max_id < int64_t(j.size()) * 4 + 1024, "tokenizer: vocab.json ids are implausibly sparse (max id ",
              max_id, " for ", j.size(), " tokens)");
  t.id_to_bytes_.assign(size_t(max_id + 1), std::string());
  t.has_id_.assign(size_t(max_id + 1), false);
  std::vector<std::string> owner(size_t(max_id + 1));
  for (auto& [tok, idj] : j.items()) {
    int64_t id = idj.get<int64_t>();
    // Two tokens under one id would make decode(encode(x)) differ from x.
    EMBER_CHECK(!t.has_id_[size_t(id)], "tokenizer: vocab.json maps both '", owner[size_t(id)], "' and '", tok,
                "' to id ", id, " (expected one token per id)");
    t.has_id_[size_t(id)] = true;
    owner[size_t(id)] = tok;
    t.vocab_[tok] = id;
    if (tok == "<|endoftext|>") {
      t.eot_id_ = id;
      t.id_to_bytes_[size_t(id)] = tok;
      continue;
    }
    std::string bytes;
    for (const std::string& ch : chars_of(tok)) {
      auto it = unicode_to_byte.find(ch);
      EMBER_CHECK(it != unicode_to_byte.end(), "tokenizer: vocab.json token '", tok,
                  "' contains a character outside GPT-2's byte alphabet");
      bytes += char(it->second);
    }
    t.id_to_bytes_[size_t(id)] = bytes;
  }

  std::istringstream ms(merges_txt);
  std::string line;
  int rank = 0;
  while (std::getline(ms, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || line.rfind("#version", 0) == 0) continue;
    size_t sp = line.find(' ');
    EMBER_CHECK(sp != std::string::npos && sp > 0 && sp + 1 < line.size() && line.find(' ', sp + 1) == std::string::npos,
                "tokenizer: merges.txt line ", rank + 1, " is not two symbols separated by one space: '", line, "'");
    t.merge_rank_.emplace(line, rank++);
  }
  return t;
}

std::vector<std::string> Tokenizer::pretokenize(const std::string& text) const {
  // Valid UTF-8 runs go through the pattern; each invalid byte is a piece of its own, which
  // byte-level BPE still encodes exactly.
  std::vector<std::string> out;
  size_t run = 0, i = 0;
  while (i < text.size()) {
    size_t n = utf8_len(text, i);
    if (n > 0) {
      i += n;
      continue;
    }
    if (i > run) split_valid(text.substr(run, i - run), out);
    out.push_back(text.substr(i, 1));
    run = ++i;
  }
  if (i > run) split_valid(text.substr(run, i - run), out);
  return out;
}

std::vector<std::string> Tokenizer::bpe(const std::string& piece) const {
  std::vector<std::string> sym;
  for (unsigned char c : piece) sym.push_back(byte_to_unicode()[c]);
  while (sym.size() > 1) {
    int best = std::numeric_limits<int>::max();
    size_t at = 0;
    for (size_t i = 0; i + 1 < sym.size(); ++i) {
      auto it = merge_rank_.find(sym[i] + " " + sym[i + 1]);
      if (it != merge_rank_.end() && it->second < best) {
        best = it->second;
        at = i;
      }
    }
    if (best == std::numeric_limits<int>::max()) break;
    // Merge every occurrence of the best pair, left to right.
    std::string a = sym[at], b = sym[at + 1];
    std::vector<std::string> next;
    for (size_t i = 0; i < sym.size();) {
      if (i + 1 < sym.size() && sym[i] == a && sym[i + 1] == b) {
        next.push_back(a + b);
        i += 2;
      } else {
        next.push_back(sym[i++]);
      }
    }
    sym.swap(next);
  }
  return sym;
}

std::vector<int64_t> Tokenizer::encode(const std::string& text) const {
  // "<|endoftext|>" in the text is the special token itself, as Hugging Face's tokenizer treats it.
  // One pass over the text, segment by segment: memory stays linear in its length however many
  // special tokens it holds (splitting recursively kept a copy of the rest at every one).
  static const std::string kEot = "<|endoftext|>";
  std::vector<int64_t> ids;
  size_t pos = 0;
  for (;;) {
    const size_t at = eot_id_ >= 0 ? text.find(kEot, pos) : std::string::npos;
    const size_t end = at == std::string::npos ? text.size() : at;
    if (end > pos) encode_ordinary(text.substr(pos, end - pos), ids);
    if (at == std::string::npos) break;
    ids.push_back(eot_id_);
    pos = at + kEot.size();
  }
  return ids;
}

void Tokenizer::encode_ordinary(const std::string& text, std::vector<int64_t>& ids) const {
  for (const std::string& piece : pretokenize(text)) {
    auto hit = cache_.find(piece);
    if (hit == cache_.end()) {
      std::vector<int64_t> pid;
      for (const std::string& s : bpe(piece)) {
        auto it = vocab_.find(s);
        EMBER_CHECK(it != vocab_.end(), "tokenizer: symbol '", s, "' produced by the merges is not in vocab.json");
        pid.push_back(it->second);
      }
      if (cache_.size() > 100000) cache_.clear();  // bound the memory a long stream of new words can take
      hit = cache_.emplace(piece, std::move(pid)).first;
    }
    ids.insert(ids.end(), hit->second.begin(), hit->second.end());
  }
}

void Tokenizer::check_covers(int64_t model_vocab, const std::string& what) const {
  EMBER_CHECK(vocab_size() >= model_vocab, what, ": vocab.json has ids up to ", vocab_size() - 1,
              " but the model's vocab_size is ", model_vocab, " (expected a token for every id below it)");
  for (int64_t id = 0; id < model_vocab; ++id)
    EMBER_CHECK(has_id_[size_t(id)], what, ": vocab.json has no token for id ", id, ", which the model (vocab_size ",
                model_vocab, ") can produce");
}

std::string Tokenizer::token(int64_t id) const {
  EMBER_CHECK(id >= 0 && id < vocab_size(), "tokenizer: token id ", id, " is outside the vocabulary [0, ", vocab_size(),
              ")");
  EMBER_CHECK(has_id_[size_t(id)], "tokenizer: token id ", id, " is not in vocab.json (a gap in its ids)");
  return id_to_bytes_[size_t(id)];
}

std::string Tokenizer::decode(const std::vector<int64_t>& ids) const {
  std::string out;
  for (int64_t id : ids) out += token(id);
  return out;
}

}  // namespace ember::gpt2
