#include "framework/train/dist/settings_check.h"

#include <algorithm>
#include <cstring>

namespace ember::dist {
namespace {

uint64_t fnv1a(const std::string& s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

}  // namespace

std::string first_difference(const nlohmann::ordered_json& a, int ra, const nlohmann::ordered_json& b, int rb) {
  for (auto it = a.begin(); it != a.end(); ++it) {
    const auto other = b.find(it.key());
    if (other == b.end())
      return str(it.key(), " is ", it.value().dump(), " on rank ", ra, " but rank ", rb, " has no such setting");
    if (*other != it.value())
      return str(it.key(), " is ", it.value().dump(), " on rank ", ra, " but ", other->dump(), " on rank ", rb);
  }
  for (auto it = b.begin(); it != b.end(); ++it)
    if (!a.contains(it.key()))
      return str(it.key(), " is ", it.value().dump(), " on rank ", rb, " but rank ", ra, " has no such setting");
  return "";
}

void check_same_settings(Communicator& comm, const nlohmann::ordered_json& settings) {
  EMBER_CHECK(settings.is_object(), "dist: the settings to compare must be a JSON object");
  const int world = comm.world_size();
  if (world == 1) return;
  const std::string text = settings.dump();
  uint64_t h = fnv1a(text);
  int64_t hash = 0;
  std::memcpy(&hash, &h, sizeof h);
  // Fixed size on every rank, whatever the settings: safe to exchange before anything is known.
  const Tensor sums = comm.all_gather(from_vector(std::vector<int64_t>{int64_t(text.size()), hash}));
  const int64_t* s = sums.data<int64_t>();
  bool same = true;
  int64_t longest = 0;
  for (int r = 0; r < world; ++r) {
    same = same && s[2 * r] == s[0] && s[2 * r + 1] == s[1];
    longest = std::max(longest, s[2 * r]);
  }
  if (same) return;
  // Every rank saw the same lengths, so this second exchange has one size everywhere too.
  std::vector<int64_t> mine(size_t(longest), 0);
  for (size_t i = 0; i < text.size(); ++i) mine[i] = static_cast<unsigned char>(text[i]);
  const Tensor all = comm.all_gather(from_vector(mine));
  const int64_t* p = all.data<int64_t>();
  auto text_of = [&](int r) {
    std::string t(size_t(s[2 * r]), '\0');
    for (size_t i = 0; i < t.size(); ++i) t[i] = char(p[size_t(r) * size_t(longest) + i]);
    nlohmann::ordered_json j = nlohmann::ordered_json::parse(t, nullptr, /*allow_exceptions=*/false);
    return j.is_discarded() ? nlohmann::ordered_json::object() : j;
  };
  const nlohmann::ordered_json root = text_of(0);
  for (int r = 1; r < world; ++r) {
    const std::string diff = first_difference(root, 0, text_of(r), r);
    if (!diff.empty())
      throw Error(str("the ranks were started with different settings: ", diff,
                      " (expected every rank to run with the same flags)"));
  }
  throw Error(str("the ranks' settings differ in their encoding (expected the same program on every rank)"));
}

}  // namespace ember::dist
