// The packed GEMM's model of the caches: the L2's size and sets (which rows a stride apart keep a
// block in it), the L3 share that decides whether B comes from memory at every call, and the block
// sizes both lead to: the stripes' depth and the general path's blocks of A. The measurements
// behind each rule are in TUNING.md.
#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <numeric>

#include <unistd.h>

#include "framework/core/storage.h"
#include "ops/matmul/cpu/kernels.h"
#include "ops/matmul/cpu/packed_internal.h"

namespace ember::cpu {

namespace {
// The streamed-B threshold set by set_streamed_b_bytes (0: the default, from the L3). Atomic, so
// that a setter on one thread and products on others do not race.
std::atomic<int64_t> g_streamed_b_bytes{0};

// Half the L3, at most 64 MiB (kL3MostCounted / kL3TenantShare): the most of a shared L3 that one
// tenant of a server can count on keeping between two calls.
int64_t streamed_b_default() {
  static const long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
  const int64_t cache = l3 > 0 ? int64_t(l3) : packed_gemm::kL3BytesFallback;
  return std::min<int64_t>(cache, packed_gemm::kL3MostCounted) / packed_gemm::kL3TenantShare;
}
}  // namespace

int64_t streamed_b_bytes() {
  const int64_t set = g_streamed_b_bytes.load(std::memory_order_relaxed);
  return set > 0 ? set : streamed_b_default();
}
void set_streamed_b_bytes(int64_t bytes) {
  EMBER_CHECK(bytes >= 0, "matmul: the streamed-B threshold must be >= 0 bytes (0: the default), got ", bytes);
  g_streamed_b_bytes.store(bytes, std::memory_order_relaxed);
}

namespace packed_gemm {

int64_t l2_bytes() {
  static const long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
  return l2 > 0 ? int64_t(l2) : kL2BytesFallback;
}

bool b_from_memory(const GemmArgs& g) {
  return double(g.k) * double(g.n) * double(itemsize(g.dtype)) > double(streamed_b_bytes());
}

namespace {
// The room in a cache of `cache` bytes that `rows` rows row_bytes apart leave a block of
// block_row_bytes per row, where `span` bytes of their placement are known: the rows land on
// span / gcd(row_bytes, span) offsets of the span at most, and the block can use only the sets
// those offsets cover.
double room(int64_t cache, int64_t row_bytes, int64_t rows, int64_t block_row_bytes, int64_t span) {
  const int64_t offsets = std::min(rows, span / std::gcd(std::abs(row_bytes), span));
  const int64_t covered = std::min(span, offsets * block_row_bytes);
  return double(cache) * double(covered) / double(span);
}
}  // namespace

// An address's set in a cache of `ways` ways repeats every size / ways bytes (the period), and rows
// whose stride shares a large power of two with it land on a few of its offsets only: at 8 KiB
// apart, 2 KiB of each row use a quarter of a 2 MiB, 16-way L2. That is exact on huge pages, whose
// physical bits below 2 MiB are the virtual ones. On 4 KiB pages only the offsets within a page are
// known; which of the period's pages (its colours) each row lands on is the OS's draw, and some
// are drawn more often than others: there the block must also fit 1 / kFourKiBRoomShare of the
// room its offsets within a page leave. Memory not known to lie on huge pages (on_huge_pages) may
// lie on either, so it must fit both ways.
bool rows_fit_l2(int64_t row_bytes, int64_t rows, int64_t block_row_bytes, bool huge_pages) {
  static const long assoc = sysconf(_SC_LEVEL2_CACHE_ASSOC);
  const int64_t cache = l2_bytes(), ways = assoc > 0 ? int64_t(assoc) : kL2WaysFallback;
  const int64_t period = std::max<int64_t>(kLineBytes, cache / ways);
  const double block = double(rows) * double(block_row_bytes);
  if (block > room(cache, row_bytes, rows, block_row_bytes, period)) return false;
  return huge_pages || period <= kPageBytes ||
         block <= room(cache, row_bytes, rows, block_row_bytes, kPageBytes) / kFourKiBRoomShare;
}

namespace {
// The most rows of B a stripe of NR columns may span: every row panel reads the stripe from L2, so
// its rows must fit the sets they fall on there (rows_fit_l2). Halved from kStripeKc (or, for a B
// from memory, kStreamedStripeKc) down to kStripeLeastKc; 0 where none fits.
int64_t stripe_rows_cap(const GemmArgs& g, int64_t NR) {
  const int64_t elem = int64_t(itemsize(g.dtype));
  const bool huge = on_huge_pages(g.b, size_t(((g.k - 1) * g.b_rs + g.n) * elem));
  for (int64_t most = b_from_memory(g) ? kStreamedStripeKc : kStripeKc; most >= kStripeLeastKc; most /= 2)
    if (rows_fit_l2(g.b_rs * elem, most, NR * elem, huge)) return most;
  return 0;
}
}  // namespace

// Each kc block of the stripes reads and writes all of C again, while the few-rows copying path
// copies each sliver of B once for all its row panels: a shallow cap costs the stripes more the
// more rows share it (stripes_too_shallow), and such products take the copying path (0).
template <class T>
int64_t stripe_depth(const GemmArgs& g, const PackedConfig<T>& cfg) {
  if (!takes_stripes(g, cfg)) return 0;
  const int64_t most = stripe_rows_cap(g, cfg.stripe_nr);
  if (most == 0 || stripes_too_shallow(most, g.k, g.m)) return 0;
  const int64_t blocks = (g.k + most - 1) / most;
  return (g.k + blocks - 1) / blocks;
}

// Rows of A that stay in L2 serve as well as a packed copy, and the kernel's broadcasts then come
// from streams of consecutive floats, which the hardware prefetchers follow. By the rule for huge
// pages alone: the one for 4 KiB pages was measured on the stripes only.
template <class T>
bool a_in_place(const GemmArgs& g, const PackedConfig<T>& cfg, int64_t kc, int64_t mc) {
  return cfg.kernel_rows_a && g.a_cs == 1 &&
         rows_fit_l2(g.a_rs * int64_t(sizeof(T)), mc, kc * int64_t(sizeof(T)), true);
}

namespace {
// The rows of A's block in the general path: mc, or where A is row-major and its rows would not
// keep mc of them in L2, the most rows (halving, down to `least`) that they do keep, so that A is
// still read in place.
template <class T>
int64_t a_block_rows(const GemmArgs& g, const PackedConfig<T>& cfg, int64_t kc, int64_t mc, int64_t least) {
  if (!cfg.kernel_rows_a || g.a_cs != 1 || a_in_place(g, cfg, kc, mc)) return mc;
  for (int64_t rows = (mc / 2) / cfg.mr * cfg.mr; rows >= least; rows = (rows / 2) / cfg.mr * cfg.mr)
    if (a_in_place(g, cfg, kc, rows)) return rows;
  return mc;
}
}  // namespace

// The config's kc and mc suit a 1 MiB L2 (microkernels.cpp): the kc x NR sliver of B and the
// mc x kc block of A fill half of it. A 2 MiB L2 takes twice the depth rather than twice the rows:
// every kc block costs a load and a store of each tile of C, and each kernel call then does twice
// the FMAs for the same overhead; a still larger L2 also takes more rows. Configs whose B sliver is
// sized for the L1 (AVX2's 256 x 16 floats) keep their kc: twice it would outgrow a 32 KiB L1.
template <class T>
GeneralBlocks general_blocks(const GemmArgs& g, const PackedConfig<T>& cfg) {
  const bool sliver_in_l2 = cfg.kc * cfg.nr * int64_t(sizeof(T)) > kL1MostBytes;
  const int64_t scale = std::clamp<int64_t>(l2_bytes() >> 20, 1, kL2MostMiB);
  const int64_t deeper = sliver_in_l2 ? std::min<int64_t>(scale, kMostDeeper) : 1;
  const int64_t kc = std::min(cfg.kc * deeper, g.k);
  const int64_t mc = std::min(cfg.mc * (scale / deeper), round_up(g.m, cfg.mr));
  return {kc, a_block_rows(g, cfg, kc, mc, cfg.mc * scale / kARowsFloorShare)};
}

template int64_t stripe_depth<float>(const GemmArgs&, const PackedConfig<float>&);
template int64_t stripe_depth<double>(const GemmArgs&, const PackedConfig<double>&);
template bool a_in_place<float>(const GemmArgs&, const PackedConfig<float>&, int64_t, int64_t);
template bool a_in_place<double>(const GemmArgs&, const PackedConfig<double>&, int64_t, int64_t);
template GeneralBlocks general_blocks<float>(const GemmArgs&, const PackedConfig<float>&);
template GeneralBlocks general_blocks<double>(const GemmArgs&, const PackedConfig<double>&);

}  // namespace packed_gemm
}  // namespace ember::cpu
