// The tuning constants of the packed GEMM (packed.cpp and the files beside it), each with the
// reason for it. The measurements they rest on, and the CPUs they were taken on, are in TUNING.md
// beside this file.
#pragma once
#include <cstdint>

namespace ember::cpu::packed_gemm {

// ---- Threads ----

// Threads pay off from about 128^3 multiply-adds: 10 us on one core, against a few microseconds
// for waking a thread and two barriers on a quiet machine (much more on a busy one).
constexpr double kThreadedMacs = 128.0 * 128.0 * 128.0;
// The thread grid splits rows unless splitting columns cuts the largest share by more than 5%: rows
// split among threads pack no row of A twice.
constexpr double kGridRowsMargin = 0.95;
// ... and where A is not packed, splits only columns unless that leaves a share over 5% larger:
// threads sharing no column of C pack their own slivers of B and never wait for one another.
constexpr double kGridColumnsMargin = 1.05;
// Threads that split only the columns of a product whose A is read in place take this many
// columns at a time from a shared counter: fixed halves kept a thread waiting on one whose core
// ran slower for a while, and a group's kc x 128 block of B stays in L2 across all row blocks.
constexpr int64_t kColumnsInTurn = 128;

// ---- Few rows: skinny(), the copying path, the stripes ----

// Below this many rows a product streams B from its storage (skinny() or the stripes): packing B
// would copy all of it to use each element fewer than 4 times.
constexpr int64_t kSkinnyRows = 4;
// skinny() hands each thread at least this many columns, and at least kSkinnyTaskMacs
// multiply-adds' worth of them: smaller tasks cost more to hand out than they compute.
constexpr int64_t kSkinnyMinColumns = 64;
constexpr int64_t kSkinnyTaskMacs = 65536;
// Products with at most this many rows (or the config's mc, if more) read B in place, unpacked:
// each element of B is used only m times, too few to repay a packed copy of it.
constexpr int64_t kUnpackedRows = 256;
// The most rows of B an unpacked sliver spans (its kc): each row of a sliver lies on its own page,
// and longer slivers ran slower.
constexpr int64_t kUnpackedKc = 256;
// A page: rows of B whose stride shares a large power of two with it fall into few L2 sets.
constexpr int64_t kPageBytes = 4096;
// A sliver whose rows alias on 4 KiB multiples takes kc = kAliasedSliverBytes / gcd(stride, 4 KiB)
// rows, at least kAliasedKcFloor: longer ones evicted themselves before their second use.
constexpr int64_t kAliasedSliverBytes = 128 * 4096;
constexpr int64_t kAliasedKcFloor = 64;
// The most rows of a transposed B packed into one sliver (kc x NR: 256 KiB of floats for AVX-512,
// in L2 beside A's m x kc block): a longer kc makes each of B's columns one contiguous run.
constexpr int64_t kTransposedKc = 1024;
// ... and fewer where A's m x kc block would outgrow this (half a 1 MiB L2), but never fewer than
// kTransposedKcFloor.
constexpr int64_t kTransposedABytes = 512 * 1024;
constexpr int64_t kTransposedKcFloor = 64;
// A streamed B is packed in groups of slivers that read this many bytes of each row in one run,
// which the hardware prefetchers follow (a sliver's own 256 bytes they do not).
constexpr int64_t kStreamedRun = 1024;
// The stripes' most rows of B per kc block, in balanced blocks: MKL's choice for k = 768 and 3072.
constexpr int64_t kStripeKc = 384;
// ... and for a B streamed from memory, whose rows then wait on memory's latency.
constexpr int64_t kStreamedStripeKc = 256;
// The least depth a stripe is halved to before the product takes the copying path instead.
constexpr int64_t kStripeLeastKc = 48;
// A stripe depth from which the stripes take every row count: at 192 and above they measured level
// with the copying path or ahead of it.
constexpr int64_t kStripeFullDepth = 192;

// Whether stripes of depth `cap` are too shallow for a product of m rows and depth k: below
// kStripeFullDepth each kc block reads and writes all of C again, which costs the stripes more the
// more rows there are, so they take at most two thirds as many rows as their cap, or a k that one
// block holds.
constexpr bool stripes_too_shallow(int64_t cap, int64_t k, int64_t m) {
  return cap < kStripeFullDepth && k > cap && 3 * m > 2 * cap;
}

// Whether threads split the rows of a few-rows product rather than its columns: where C is narrow
// next to its rows (each thread then reads all of B, small next to its share of A) and there are
// at least two row panels per thread. A row-major B is copied as it is read, so it splits rows up to
// twice as many columns as rows (`columns_per_row` 2); a transposed B, packed in a pass of its
// own, up to as many (1).
constexpr int64_t kRowMajorColumnsPerRow = 2;
constexpr int64_t kTransposedColumnsPerRow = 1;
constexpr int64_t kPanelsPerThreadToSplitRows = 2;
constexpr bool splits_rows(int64_t m, int64_t n, int64_t columns_per_row, int64_t panels, int64_t threads) {
  return columns_per_row * m >= n && panels >= kPanelsPerThreadToSplitRows * threads;
}

// ---- Caches ----

// Where the system does not say: a 1 MiB L2 of 16 ways and a 32 MiB L3, common on x86 servers.
constexpr int64_t kL2BytesFallback = int64_t(1) << 20;
constexpr int64_t kL2WaysFallback = 16;
constexpr int64_t kL3BytesFallback = int64_t(32) << 20;
// A cache line: the shortest period of L2 sets there is.
constexpr int64_t kLineBytes = 64;
// A block of rows on 4 KiB pages must also fit this share of the room its offsets within a page
// leave (1 / 2): which page colour each row lands on is the OS's draw, and some are drawn more.
constexpr int64_t kFourKiBRoomShare = 2;
// The most of the L3 counted on (128 MiB) and the share of it (1 / 2) that one tenant of a shared
// server can count on keeping between two calls: a B larger than that comes from memory each call.
constexpr int64_t kL3MostCounted = int64_t(128) << 20;
constexpr int64_t kL3TenantShare = 2;
// A B sliver larger than any core's L1d: a config with one streams its sliver from L2 already,
// and takes a deeper kc on a larger L2 (general_blocks).
constexpr int64_t kL1MostBytes = int64_t(64) << 10;
// The general path's blocks grow with the L2 in MiB up to this many, and deepen kc at most this
// many times (more rows beyond that); A's block keeps at least 1 / kARowsFloorShare of mc per MiB.
constexpr int64_t kL2MostMiB = 4;
constexpr int64_t kMostDeeper = 2;
constexpr int64_t kARowsFloorShare = 4;

}  // namespace ember::cpu::packed_gemm
