#include "models/gpt2/text_data.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace ember::gpt2 {

TextCorpus TextCorpus::from_text(const std::string& text, double val_fraction) {
  EMBER_CHECK(val_fraction > 0 && val_fraction < 1, "TextCorpus: val_fraction must be in (0, 1), got ", val_fraction);
  TextCorpus c;
  size_t cut = size_t(double(text.size()) * (1 - val_fraction));
  c.train_ = text.substr(0, cut);
  c.val_ = text.substr(cut);
  return c;
}

TextCorpus TextCorpus::from_fortunes(const std::string& dir, double val_fraction) {
  namespace fs = std::filesystem;
  EMBER_CHECK(fs::is_directory(dir), "TextCorpus: '", dir,
              "' not found; install Debian's 'fortunes' package (apt-get install fortunes) or pass another folder");
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir)) {
    std::string ext = e.path().extension().string();
    if (e.is_regular_file() && ext != ".dat" && ext != ".u8") files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  std::string text;
  for (const auto& p : files) {
    std::ifstream f(p, std::ios::binary);
    std::ostringstream ss;
    ss << f.rdbuf();
    text += ss.str();
  }
  EMBER_CHECK(text.size() > 4096, "TextCorpus: '", dir, "' holds only ", text.size(), " bytes of text");
  return from_text(text, val_fraction);
}

std::pair<Tensor, Tensor> TextCorpus::batch(bool validation, int64_t batch, int64_t context, Generator& gen) const {
  const std::string& src = validation ? val_ : train_;
  EMBER_CHECK(batch > 0 && context > 0 && int64_t(src.size()) > context + 1, "TextCorpus: cannot draw windows of ",
              context + 1, " bytes from ", src.size(), " bytes");
  Tensor x = empty({batch, context}, DType::Int64), y = empty({batch, context}, DType::Int64);
  int64_t* px = x.data<int64_t>();
  int64_t* py = y.data<int64_t>();
  uint64_t span = uint64_t(src.size()) - uint64_t(context) - 1;
  for (int64_t b = 0; b < batch; ++b) {
    size_t start = size_t(gen.next_u64() % span);
    for (int64_t t = 0; t < context; ++t) {
      px[b * context + t] = static_cast<unsigned char>(src[start + size_t(t)]);
      py[b * context + t] = static_cast<unsigned char>(src[start + size_t(t) + 1]);
    }
  }
  return {x, y};
}

double TextCorpus::unigram_loss() const {
  std::vector<double> count(256, 1.0);  // add-one smoothing: a byte unseen in training costs log(N + 256)
  for (unsigned char c : train_) count[c] += 1;
  double total = double(train_.size()) + 256.0, loss = 0;
  for (unsigned char c : val_) loss -= std::log(count[c] / total);
  return loss / double(val_.size());
}

}  // namespace ember::gpt2
