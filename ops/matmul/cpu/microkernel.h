// The register micro-kernel of the packed GEMM: C[MR x NR] (+)= Ap[MR x kc] * Bp[kc x NR], where
// Ap is an MR-row sliver packed k-major (Ap[p*MR + i]) and Bp an NR-column sliver packed k-major
// (Bp[p*NR + j]). The MR x NR block of C lives in vector registers for the whole k loop, so each
// element of A and B loaded from L1/L2 feeds NR resp. MR multiply-adds.
//
// It is written once with GCC vector extensions and instantiated for several vector widths. The
// body is always_inline and carries no target of its own: inlined into a wrapper that has
// __attribute__((target("avx512f,..."))) (see microkernels.cpp) it is compiled to zmm FMAs, into
// one with target("avx2,fma") to ymm FMAs, and into a plain function to SSE2 (or generic) code.
// `acc += a * b` becomes a fused multiply-add under GCC's default -ffp-contract=fast (gnu++17).
#pragma once
#include <algorithm>
#include <cstdint>
#include <type_traits>

namespace ember::cpu::micro {

// A vector of W elements of T that may live at any T-aligned address and alias T (so that
// loads and stores through it are plain dereferences, keeping the accumulators in registers).
template <class T, int W>
struct Vec {
  typedef T type __attribute__((vector_size(W * sizeof(T)), aligned(sizeof(T)), may_alias));
};

// Where the micro-kernel finds its A elements: A(i) is row i's element at the current step of k,
// next() moves to the following step. A packed sliver holds them k-major, AS apart (AS is the
// sliver's packed height: MR, except for a kernel that computes only the first MR rows of a
// taller sliver, the last, ragged panel of A).
template <class T, int AS>
struct PackedA {
  const T* p;
  __attribute__((always_inline)) T operator()(int i) const { return p[i]; }
  __attribute__((always_inline)) void next() { p += AS; }
};
// ... and the R rows of a row-major A read where they lie, `rs` elements apart: two base pointers,
// G rows each (three, or four for more than six rows), so that every row is one register plus a
// small multiple of rs away.
template <class T, int R>
struct RowsA {
  static constexpr int G = R > 6 ? 4 : 3;
  const T* p0;
  const T* p1;
  int64_t rs;
  __attribute__((always_inline)) RowsA(const T* a, int64_t a_rs) : p0(a), p1(R > G ? a + G * a_rs : a), rs(a_rs) {}
  __attribute__((always_inline)) T operator()(int i) const { return i < G ? p0[i * rs] : p1[(i - G) * rs]; }
  __attribute__((always_inline)) void next() { ++p0, ++p1; }
};

// How far ahead a stripe (below) fetches its rows of B: two rows, as MKL's no-copy kernel does.
// Every row panel reads the stripe from L2, so the distance only has to cover L2's latency, and
// the fewer lines in flight, the fewer the stripe's rows evict from the few L1 sets they share
// (TUNING.md). A stripe does not fetch its tile of C into L1 either, for the same sets' sake (into
// L2, where its caller says C is not there: kernel_body_stripe).
constexpr int kStripeAhead = 2;
// The first row panel of a stripe reads it from farther than L2 wherever the next-stripe fetches
// (below) did not keep it there, and fetches it eight rows ahead: where B's rows lie a multiple of
// 2 KiB apart, that first panel took much longer than the others, and eight rows cut most of the
// excess (TUNING.md).
constexpr int kStripeFirstAhead = 8;
// How many row panels of a stripe, the last ones, fetch the next stripe between them: eight, all
// of GPT-2's 64 rows. Rows fetched into L1 by the panels of a taller stripe waited too long there
// for their turn (TUNING.md).
constexpr int64_t kStripeFetchPanels = 8;

// MR rows, NV vectors of W lanes per row: NR = NV * W columns. Row p of the B sliver is at
// bp + p * b_rs: NR for a packed sliver, B's own row stride when B is read where it lies (the
// unpacked path of few_rows.cpp). The call also asks the memory system for pf_rows rows of NR
// elements at pf + r * pf_rs, one cache line per step while they last: the caller's way of
// fetching, a little per call, the B rows it will need next, which lie a row apart (often a page
// apart) where the hardware prefetchers do not follow. Those rows are asked into L2 only
// (prefetcht2): they are needed a whole sliver later, and brought into L1 they had displaced the
// lines this call is using (TUNING.md); a stripe fetches its rows otherwise (kernel_body_stripe,
// and the k loops below). With `copy`, each row of B is also stored at copy + p * NR as it is
// loaded: the first row panel packs the sliver it reads in place for the panels after it.
// The A elements come from `ap`, a PackedA or a RowsA (above). A B read where it lies is fetched
// ahead_rows (by default Ahead) rows ahead of the step that reads it; with RowTail, also the line
// of each row's last element (rows that do not start on a cache line touch one line more). A
// Stripe kernel fetches the caller's rows as a stripe asks and leaves C alone (see kStripeAhead).
template <class T, int W, int MR, int NV, class A, int Ahead = 8, bool RowTail = false, bool Stripe = false>
__attribute__((always_inline)) inline void kernel_body_from(int64_t kc, A ap, const T* __restrict bp, int64_t b_rs,
                                                            T* __restrict c, int64_t c_rs, bool accumulate,
                                                            const T* pf, int64_t pf_rs, int64_t pf_rows,
                                                            T* __restrict copy, int64_t ahead_rows = Ahead) {
  using V = typename Vec<T, W>::type;
  constexpr int NR = NV * W;
  // The loops over the block are unrolled by pragma, not left to GCC's heuristics: rolled, they
  // kept the accumulators in a stack array outside the k loop, 24 zeroing stores before it and
  // 24 spills and reloads after it in every call of the 6 x 64 kernel.
  V acc[MR][NV];
#pragma GCC unroll 16
  for (int i = 0; i < MR; ++i) {
#pragma GCC unroll 16
    for (int j = 0; j < NV; ++j) acc[i][j] = V{};
    // C is read (or written) only after the k loop: start fetching its lines now (not in a stripe,
    // see kStripeAhead).
    if constexpr (!Stripe)
      for (int j = 0; j < NR * int(sizeof(T)); j += 64) __builtin_prefetch(reinterpret_cast<const char*>(c + i * c_rs) + j, 1);
  }
  // B read where it lies (b_rs != NR): its rows lie a stride apart, often more than the 2 KiB the
  // L1 stride prefetcher follows, so each step also asks for the row ahead_rows below it.
  const int64_t ahead_end = b_rs != NR ? kc - ahead_rows : 0;
  const int64_t ahead_off = ahead_rows * b_rs;
  // The k loops, once with the copy and once without (the choice made per call, not per step).
  auto loops = [&](auto with_copy) __attribute__((always_inline)) {
    constexpr bool kCopy = decltype(with_copy)::value;
    auto step = [&]() __attribute__((always_inline)) {
      V b[NV];
      for (int j = 0; j < NV; ++j) b[j] = *reinterpret_cast<const V*>(bp + j * W);
      if constexpr (kCopy) {
        for (int j = 0; j < NV; ++j) *reinterpret_cast<V*>(copy + j * W) = b[j];
        copy += NR;
      }
      for (int i = 0; i < MR; ++i) {
        V a = ap(i) - V{};  // broadcast; x - 0 == x exactly, so this folds to one vbroadcast
        for (int j = 0; j < NV; ++j) acc[i][j] += a * b[j];
      }
      ap.next();
      bp += b_rs;
    };
    auto fetch_ahead = [&]() __attribute__((always_inline)) {
      for (int j = 0; j < NR * int(sizeof(T)); j += 64)
        __builtin_prefetch(reinterpret_cast<const char*>(bp + ahead_off) + j, 0, 3);
      // A row that does not start on a cache line (GPT-2's 50257 columns): its NR elements touch one
      // line more, the one holding its last byte, which must be fetched too.
      if constexpr (RowTail)
        __builtin_prefetch(reinterpret_cast<const char*>(bp + ahead_off + NR) - 1, 0, 3);
    };
    int64_t p = 0;
    // The caller's rows, where a stripe asks (see kStripeAhead): one whole row every `every` steps,
    // spread over the steps that fetch ahead, into L1 and L2 (prefetcht0), as MKL's no-copy kernel
    // does; a share front-loaded one line a step into L2 alone ran slower (TUNING.md).
    if constexpr (Stripe) {
      if (pf && pf_rows > 0) {
        const int64_t every = std::max<int64_t>(1, ahead_end / pf_rows);
        const char* row = reinterpret_cast<const char*>(pf);
        auto fetch_row = [&]() __attribute__((always_inline)) {
          for (int j = 0; j < NR * int(sizeof(T)); j += 64) __builtin_prefetch(row + j, 0, 3);
          if constexpr (RowTail) __builtin_prefetch(row + NR * int(sizeof(T)) - 1, 0, 3);
          row += pf_rs * int64_t(sizeof(T));
        };
        int64_t left = pf_rows;
        for (int64_t q = 0; p < ahead_end; ++p) {
          if (q == 0 && left > 0) fetch_row(), --left, q = every;
          --q;
          fetch_ahead();
          step();
        }
        while (left-- > 0) fetch_row();  // rows beyond the steps (kc hardly above pf_rows)
      }
    } else {
      // Otherwise one 64-byte line per step, where the call has enough steps for that (all of a
      // row's lines at once slowed the row panels after the first: TUNING.md); else a row per
      // step. The rows go into L2 only (prefetcht2; see above).
      constexpr int64_t kLines = NR * int64_t(sizeof(T)) >= 64 ? NR * int64_t(sizeof(T)) / 64 : 1;
      if constexpr ((kLines & (kLines - 1)) == 0) {
        if (pf && pf_rows * kLines <= kc)
          for (const int64_t pe = pf_rows * kLines; p < pe; ++p) {
            __builtin_prefetch(reinterpret_cast<const char*>(pf + (p / kLines) * pf_rs) + (p % kLines) * 64, 0, 1);
            if (p < ahead_end) fetch_ahead();
            step();
          }
      }
      for (const int64_t pe = pf && p == 0 ? std::min(kc, pf_rows) : 0; p < pe; ++p) {
        for (int j = 0; j < NR * int(sizeof(T)); j += 64) __builtin_prefetch(reinterpret_cast<const char*>(pf) + j, 0, 1);
        pf += pf_rs;
        if (p < ahead_end) fetch_ahead();
        step();
      }
    }
    for (; p < ahead_end; ++p) {
      fetch_ahead();
      step();
    }
#pragma GCC unroll 4
    for (; p < kc; ++p) step();
  };
  if (copy) loops(std::true_type{});
  else loops(std::false_type{});
#pragma GCC unroll 16
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 16
    for (int j = 0; j < NV; ++j) {
      V* dst = reinterpret_cast<V*>(c + i * c_rs + j * W);
      *dst = accumulate ? *dst + acc[i][j] : acc[i][j];
    }
}

// A packed sliver of A, AS elements a step (see PackedA), with B as kernel_body_from reads it.
template <class T, int W, int MR, int NV, int AS = MR>
__attribute__((always_inline)) inline void kernel_body_strided(int64_t kc, const T* __restrict ap,
                                                               const T* __restrict bp, int64_t b_rs, T* __restrict c,
                                                               int64_t c_rs, bool accumulate, const T* pf = nullptr,
                                                               int64_t pf_rs = 0, int64_t pf_rows = 0,
                                                               T* __restrict copy = nullptr) {
  kernel_body_from<T, W, MR, NV>(kc, PackedA<T, AS>{ap}, bp, b_rs, c, c_rs, accumulate, pf, pf_rs, pf_rows, copy);
}

// A row-major A read where it lies (rows a_rs apart) against a packed sliver of B, prefetching
// pf_rows rows of another packed sliver at pf: the packed path's kernel where A is not copied.
template <class T, int W, int MR, int NV>
__attribute__((always_inline)) inline void kernel_body_rows_a(int64_t kc, const T* a, int64_t a_rs,
                                                              const T* __restrict bp, T* __restrict c, int64_t c_rs,
                                                              bool accumulate, const T* pf, int64_t pf_rows) {
  kernel_body_from<T, W, MR, NV>(kc, RowsA<T, MR>(a, a_rs), bp, NV * W, c, c_rs, accumulate, pf, NV * W, pf_rows,
                                 nullptr);
}

// The last r < MR rows of a stripe (below), with the kernel of exactly that height.
template <class T, int W, int R, int NV, bool RowTail>
__attribute__((always_inline)) inline void stripe_rest(int r, int64_t kc, const T* a, int64_t a_rs, const T* b,
                                                       int64_t b_rs, T* c, int64_t c_rs, bool accumulate,
                                                       const T* pf, int64_t pf_rows, int64_t ahead) {
  if constexpr (R > 0) {
    if (r == R)
      kernel_body_from<T, W, R, NV, RowsA<T, R>, kStripeAhead, RowTail, true>(
          kc, RowsA<T, R>(a, a_rs), b, b_rs, c, c_rs, accumulate, pf, b_rs, pf_rows, nullptr, ahead);
    else
      stripe_rest<T, W, R - 1, NV, RowTail>(r, kc, a, a_rs, b, b_rs, c, c_rs, accumulate, pf, pf_rows, ahead);
  }
}

// The panels of a stripe (kernel_body_stripe below), RowTail as in kernel_body_from.
template <class T, int W, int MR, int NV, bool RowTail>
__attribute__((always_inline)) inline void stripe_panels(int64_t kc, const T* a, int64_t a_rs, int64_t rows,
                                                         const T* b, int64_t b_rs, T* c, int64_t c_rs,
                                                         bool accumulate, bool fetch_c, const T* next) {
  constexpr int kRowBytes = NV * W * int(sizeof(T));
  const int64_t panels = (rows + MR - 1) / MR;
  const int64_t first = std::max<int64_t>(0, panels - kStripeFetchPanels);
  const int64_t share = (kc + (panels - first) - 1) / (panels - first);
  for (int64_t ip = 0; ip < panels; ++ip) {
    const T* pf = nullptr;
    int64_t pf_rows = 0;
    // A stripe of one panel (at most MR rows) fetches no next stripe: that panel reads all of B
    // from farther anyway, kStripeFirstAhead rows ahead, and the next stripe's rows, fetched into
    // L1 a whole stripe before their turn, only left it again (TUNING.md).
    if (next && panels > 1 && ip >= first && (ip - first) * share < kc) {
      const int64_t r0 = (ip - first) * share;
      pf = next + r0 * b_rs, pf_rows = std::min(share, kc - r0);
    }
    const T* ai = a + ip * MR * a_rs;
    T* ci = c + ip * MR * c_rs;
    const int r = int(std::min<int64_t>(MR, rows - ip * MR));
    if (fetch_c)  // into L2 only: in L1 the stripe's rows of B would push them out again
      for (int i = 0; i < r; ++i)
        for (int j = 0; j < kRowBytes; j += 64) __builtin_prefetch(reinterpret_cast<const char*>(ci + i * c_rs) + j, 0, 2);
    const int64_t ahead = ip == 0 ? kStripeFirstAhead : kStripeAhead;
    if (r == MR)
      kernel_body_from<T, W, MR, NV, RowsA<T, MR>, kStripeAhead, RowTail, true>(
          kc, RowsA<T, MR>(ai, a_rs), b, b_rs, ci, c_rs, accumulate, pf, b_rs, pf_rows, nullptr, ahead);
    else
      stripe_rest<T, W, MR - 1, NV, RowTail>(r, kc, ai, a_rs, b, b_rs, ci, c_rs, accumulate, pf, pf_rows, ahead);
  }
}

// A stripe of C: all `rows` rows (A read where it lies, a_rs apart) times NR columns of B, read
// where they lie (b_rs apart), row panels of MR and a last one of the rest, in one call so that
// one panel's end overlaps the next one's start. Nothing is copied: each panel reads the stripe's
// rows of B from L2, kStripeAhead rows ahead of itself (the first panel, which reads them from
// farther, kStripeFirstAhead), and the last kStripeFetchPanels panels fetch the next stripe's rows
// (`next`, the same rows NR columns on; nullptr: none), a share each, a whole row every few steps.
// With few rows a copy of B would be read by too few panels to repay its making. Rows of B that do
// not start on a cache line take the kernels that also fetch each row's last line; aligned rows
// skip that prefetch, which only costs them. With fetch_c, each panel first asks for its lines of
// C, for a C that is not in the L2 (the caller knows): otherwise the panel's stores at the end wait
// on them.
template <class T, int W, int MR, int NV>
__attribute__((always_inline)) inline void kernel_body_stripe(int64_t kc, const T* a, int64_t a_rs, int64_t rows,
                                                              const T* b, int64_t b_rs, T* c, int64_t c_rs,
                                                              bool accumulate, bool fetch_c, const T* next) {
  const bool aligned = reinterpret_cast<uintptr_t>(b) % 64 == 0 && (b_rs * int64_t(sizeof(T))) % 64 == 0;
  if (aligned) stripe_panels<T, W, MR, NV, false>(kc, a, a_rs, rows, b, b_rs, c, c_rs, accumulate, fetch_c, next);
  else stripe_panels<T, W, MR, NV, true>(kc, a, a_rs, rows, b, b_rs, c, c_rs, accumulate, fetch_c, next);
}

// The packed sliver (rows NR apart, a constant the compiler folds into the addressing).
template <class T, int W, int MR, int NV>
__attribute__((always_inline)) inline void kernel_body(int64_t kc, const T* __restrict ap, const T* __restrict bp,
                                                       T* __restrict c, int64_t c_rs, bool accumulate) {
  kernel_body_strided<T, W, MR, NV>(kc, ap, bp, NV * W, c, c_rs, accumulate);
}

}  // namespace ember::cpu::micro
