// C = A B for few rows, in stripes of B's columns, nothing copied (kernel_body_stripe in
// microkernel.h): each stripe of kc rows of B is read where it lies by every row panel of A, also
// read where it lies. This is how MKL's sgemm runs GPT-2's 64-row products (its no-copy kernel);
// products with A and B row-major take it where the config has the kernels and the depth pays
// (stripe_depth, cache_model.cpp). The last stripe, if narrower, takes a kernel of fewer vectors
// (and where its columns do not fill them, a zero-padded copy of them and a buffer of C). Threads
// split the stripes, or the rows where C is narrow (splits_rows).
#include <algorithm>

#include "framework/core/parallel.h"
#include "ops/matmul/cpu/packed_internal.h"

namespace ember::cpu::packed_gemm {

namespace {

// One product's stripes, shared by the threads.
template <class T>
struct Stripes : Operands<T> {
  int64_t KC;    // rows of B per stripe
  bool fetch_c;  // each panel asks for its lines of C before its k loop
};

// The last stripe, narrower than NR: as many vectors as its columns need, read in place where they
// fill them, else from a zero-padded copy, into a buffer of C.
template <class T>
void narrow_stripe(const Stripes<T>& st, int64_t pc, int64_t kc, const T* ak, const T* bk, int64_t j0, int64_t cols,
                   int64_t r0, int64_t r1) {
  const GemmArgs& g = st.g;
  const PackedConfig<T>& cfg = st.cfg;
  const int NR = cfg.stripe_nr;
  const int lanes = cfg.stripe_lanes, nv = int((cols + lanes - 1) / lanes);
  const bool has_narrow = nv < NR / lanes && cfg.stripe_narrow[nv];
  const MicroKernelStripe<T> narrow = has_narrow ? cfg.stripe_narrow[nv] : cfg.stripe;
  const int64_t wb = has_narrow ? int64_t(nv) * lanes : NR;  // the kernel's width
  if (cols == wb) {
    narrow(kc, ak, g.a_rs, r1 - r0, bk, g.b_rs, st.c + r0 * g.c_rs + j0, g.c_rs, pc > 0, st.fetch_c, nullptr);
    return;
  }
  T* bb = scratch<T>(1, size_t(kc * wb + (r1 - r0) * wb));
  T* cb = bb + kc * wb;
  for (int64_t p = 0; p < kc; ++p) {
    for (int64_t j = 0; j < cols; ++j) bb[p * wb + j] = bk[p * g.b_rs + j];
    for (int64_t j = cols; j < wb; ++j) bb[p * wb + j] = T(0);
  }
  narrow(kc, ak, g.a_rs, r1 - r0, bb, wb, cb, wb, false, false, nullptr);
  for (int64_t i = r0; i < r1; ++i)
    for (int64_t j = 0; j < cols; ++j) {
      T& dst = st.c[i * g.c_rs + j0 + j];
      dst = pc > 0 ? dst + cb[(i - r0) * wb + j] : cb[(i - r0) * wb + j];
    }
}

// One thread's share: the stripes [s0, s1) for C's rows [r0, r1).
template <class T>
void stripes_share(const Stripes<T>& st, int64_t s0, int64_t s1, int64_t r0, int64_t r1) {
  const GemmArgs& g = st.g;
  const int NR = st.cfg.stripe_nr;
  for (int64_t pc = 0; pc < g.k; pc += st.KC) {
    const int64_t kc = std::min(st.KC, g.k - pc);
    const T* ak = st.a + r0 * g.a_rs + pc;
    for (int64_t s = s0; s < s1; ++s) {
      const int64_t j0 = s * NR, cols = std::min<int64_t>(NR, g.n - j0);
      const T* bk = st.b + pc * g.b_rs + j0;
      if (cols == NR) {
        const T* next = s + 1 < s1 && j0 + 2 * NR <= g.n ? bk + NR : nullptr;
        st.cfg.stripe(kc, ak, g.a_rs, r1 - r0, bk, g.b_rs, st.c + r0 * g.c_rs + j0, g.c_rs, pc > 0, st.fetch_c, next);
        continue;
      }
      narrow_stripe(st, pc, kc, ak, bk, j0, cols, r0, r1);
    }
  }
}

}  // namespace

template <class T>
void stripes(const GemmArgs& g, const PackedConfig<T>& cfg, int nt, int64_t depth) {
  const int MR = cfg.stripe_mr, NR = cfg.stripe_nr;
  const int64_t nstripes = (g.n + NR - 1) / NR, panels = (g.m + MR - 1) / MR;
  // Where a kc block's C, B and A together are larger than the L2, a tile of C has left it by the
  // time a panel stores it (or adds to it): each panel then asks for its lines first. Where the
  // block fits, the requests only cost.
  const bool fetch_c =
      (double(g.m) * double(g.n) + double(depth) * double(g.n) + double(g.m) * double(depth)) * double(sizeof(T)) >
      double(l2_bytes());
  const Stripes<T> st{Operands<T>::of(g, cfg), depth, fetch_c};
  if (nt == 1) return stripes_share(st, 0, nstripes, 0, g.m);
  if (splits_rows(g.m, g.n, kRowMajorColumnsPerRow, panels, nt))
    return parallel_for(panels, 1, [&](int64_t lo, int64_t hi) {
      stripes_share(st, 0, nstripes, lo * MR, std::min(g.m, hi * MR));
    });
  parallel_for(nstripes, 1, [&](int64_t lo, int64_t hi) { stripes_share(st, lo, hi, 0, g.m); });
}

template void stripes<float>(const GemmArgs&, const PackedConfig<float>&, int, int64_t);
template void stripes<double>(const GemmArgs&, const PackedConfig<double>&, int, int64_t);

}  // namespace ember::cpu::packed_gemm
