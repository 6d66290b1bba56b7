#pragma once
// Register-blocked f32 kernels for small products (a convolution's per-image product and its
// gradients, a linear layer on a batch), where a general GEMM spends much of its time packing
// and blocking operands: here a block of C is held in vector registers and computed straight
// from the operands. Each element of C is summed over k in an order fixed by k alone, so the
// results do not depend on how C is cut into tiles or on the thread count.
//
// AVX-512 builds only. Its masked loads and stores take the ragged edges in the same
// instructions as the rest, and they keep GCC from folding a loaded vector into every
// multiply-add that uses it (one load per use: the kernels then waited on loads). Elsewhere
// `small_gemm` declines and the caller uses a GEMM library.
#include <algorithm>
#include <cstdint>
#include <utility>

#if defined(__AVX512F__)
#include <immintrin.h>

#include "lazytensor/ops/kernels/lane_sums.hpp"
#endif

namespace lt::kernels {

/// Whether this build has the small-product kernels.
inline constexpr bool has_small_gemm =
#if defined(__AVX512F__)
    true;
#else
    false;
#endif

#if defined(__AVX512F__)
namespace small_gemm_detail {

/// Calls f.template operator()<N>() for the N in [1, Max] that equals n.
template <int Max, class F>
[[gnu::always_inline]] inline void with_count(int n, F&& f) {
  [&]<int... I>(std::integer_sequence<int, I...>) {
    (void)((n == I + 1 ? (f.template operator()<I + 1>(), true) : false) || ...);
  }(std::make_integer_sequence<int, Max>{});
}

/// The first n lanes of a 16-lane mask (all of them for n >= 16).
inline __mmask16 first_lanes(std::int64_t n) {
  return n >= 16 ? __mmask16(0xFFFF) : static_cast<__mmask16>((1u << n) - 1u);
}

/// Calls f(i0, r) for blocks [i0, i0 + r) that cover [0, rows), as few as blocks of
/// at most `most` rows allow and as even as can be (10 rows: 5 and 5, not 8 and 2): a short
/// last block would run few accumulators per load.
template <class F>
[[gnu::always_inline]] inline void even_blocks(std::int64_t rows, int most, F&& f) {
  const std::int64_t blocks = (rows + most - 1) / most, base = rows / blocks, longer = rows % blocks;
  for (std::int64_t q = 0, i0 = 0; q < blocks; ++q) {
    const std::int64_t r = base + (q < longer ? 1 : 0);
    f(i0, r);
    i0 += r;
  }
}

/// Rows of A per panel block at most. A block of MR rows takes panel_vectors<MR> vectors of
/// B's row: as many accumulators as fit beside the loaded vectors (at most 24 of the 32
/// registers), so that short blocks still issue several independent multiply-adds per load.
inline constexpr int panel_rows = 8;
template <int MR>
inline constexpr int panel_vectors = MR >= 7 ? 3 : 4;
/// Rows of A and columns of B per dot block: 16 accumulators and 8 loaded vectors.
inline constexpr int dot_rows = 4, dot_cols = 4;

/// C rows [0, MR) x columns [0, 16 NB), masked to the first `cols`, = A B with B read by rows
/// (unit column stride): per k, NB vectors of B's row and MR broadcast elements of A's column,
/// MR x NB fused multiply-adds into accumulators that stay in registers.
template <int MR, int NB>
[[gnu::always_inline]] inline void panel_block(const float* a, std::int64_t a_row, std::int64_t a_col, const float* b,
                                               std::int64_t b_row, float* c, std::int64_t ldc, std::int64_t k,
                                               std::int64_t cols) {
  __mmask16 mask[NB];
  for (int j = 0; j < NB; ++j) mask[j] = first_lanes(cols - 16 * j);
  __m512 acc[MR][NB];
  for (int i = 0; i < MR; ++i)
    for (int j = 0; j < NB; ++j) acc[i][j] = _mm512_setzero_ps();
  for (std::int64_t p = 0; p < k; ++p) {
    __m512 bv[NB];
    for (int j = 0; j < NB; ++j) bv[j] = _mm512_maskz_loadu_ps(mask[j], b + p * b_row + 16 * j);
    for (int i = 0; i < MR; ++i) {
      const __m512 av = _mm512_set1_ps(a[i * a_row + p * a_col]);
      for (int j = 0; j < NB; ++j) acc[i][j] = _mm512_fmadd_ps(av, bv[j], acc[i][j]);
    }
  }
  for (int i = 0; i < MR; ++i)
    for (int j = 0; j < NB; ++j) _mm512_mask_storeu_ps(c + i * ldc + 16 * j, mask[j], acc[i][j]);
}

/// MR rows of C, all `cols` columns, 16 panel_vectors<MR> at a time, the last few (masked)
/// in as few vectors as they need.
template <int MR>
void panel_rows_of(const float* a, std::int64_t a_row, std::int64_t a_col, const float* b, std::int64_t b_row,
                   float* c, std::int64_t ldc, std::int64_t k, std::int64_t cols) {
  constexpr int NB = panel_vectors<MR>;
  const std::int64_t vectors = (cols + 15) / 16;
  if (vectors % NB == 0 || vectors > 4 * NB) {  // whole blocks, or enough of them that one short one costs little
    std::int64_t j = 0;
    for (; j + 16 * NB <= cols; j += 16 * NB) panel_block<MR, NB>(a, a_row, a_col, b + j, b_row, c + j, ldc, k, cols - j);
    if (j < cols)
      with_count<NB>(static_cast<int>((cols - j + 15) / 16), [&]<int V>() {
        panel_block<MR, V>(a, a_row, a_col, b + j, b_row, c + j, ldc, k, cols - j);
      });
    return;
  }
  // A few blocks (64 columns at NB 3: 32 and 32, not 48 and 16): as even as they can be.
  const std::int64_t blocks = (vectors + NB - 1) / NB, base = vectors / blocks, longer = vectors % blocks;
  for (std::int64_t q = 0, j = 0; q < blocks; ++q) {
    const std::int64_t v = base + (q < longer ? 1 : 0);
    with_count<NB>(static_cast<int>(v), [&]<int V>() {
      panel_block<MR, V>(a, a_row, a_col, b + j, b_row, c + j, ldc, k, cols - j);
    });
    j += 16 * v;
  }
}


/// C[i, j] for MR rows and NR columns as dot products of A's rows and B's columns, both with
/// unit stride along k: per 16 values of k, MR + NR loads and MR x NR fused multiply-adds (the
/// last few values of k masked), each sum's lanes added at the end.
template <int MR, int NR>
[[gnu::always_inline]] inline void dot_block(const float* a, std::int64_t lda, const float* b, std::int64_t ldb,
                                             float* c, std::int64_t ldc, std::int64_t k) {
  __m512 acc[MR][NR];
  for (int i = 0; i < MR; ++i)
    for (int j = 0; j < NR; ++j) acc[i][j] = _mm512_setzero_ps();
  auto step = [&](std::int64_t p, __mmask16 mask) {
    __m512 av[MR], bv[NR];
    for (int i = 0; i < MR; ++i) av[i] = _mm512_maskz_loadu_ps(mask, a + i * lda + p);
    for (int j = 0; j < NR; ++j) bv[j] = _mm512_maskz_loadu_ps(mask, b + j * ldb + p);
    for (int i = 0; i < MR; ++i)
      for (int j = 0; j < NR; ++j) acc[i][j] = _mm512_fmadd_ps(av[i], bv[j], acc[i][j]);
  };
  // All lanes, in a register GCC cannot see through: with a known full mask it would turn
  // the loads into plain ones and fold each into every multiply-add that uses it.
  __mmask16 full = 0xFFFF;
  asm("" : "+k"(full));
  std::int64_t p = 0;
  for (; p + 16 <= k; p += 16) step(p, full);
  if (p < k) step(p, first_lanes(k - p));
  store_lane_sums(acc, c, ldc);
}

/// MR rows of C, all `cols` columns, dot_cols at a time.
template <int MR>
void dot_rows_of(const float* a, std::int64_t lda, const float* b, std::int64_t ldb, float* c, std::int64_t ldc,
                 std::int64_t k, std::int64_t cols) {
  std::int64_t j = 0;
  for (; j + dot_cols <= cols; j += dot_cols) dot_block<MR, dot_cols>(a, lda, b + j * ldb, ldb, c + j, ldc, k);
  if (j < cols)
    with_count<dot_cols - 1>(static_cast<int>(cols - j),
                             [&]<int NR>() { dot_block<MR, NR>(a, lda, b + j * ldb, ldb, c + j, ldc, k); });
}

}  // namespace small_gemm_detail
#endif

/// C[rows, cols] (row stride ldc) = A[rows, k] B[k, cols], A's element (i, p) at
/// a[i * a_row + p * a_col] and B's (p, j) at b[p * b_row + j * b_col], k >= 1. Computes it and
/// returns true where a kernel fits and fills its vectors: B with unit column stride and at
/// least 16 columns (any A: the panel kernel), or A and B both with unit stride along k and k
/// at least 16 (dot products). Else, and in builds without AVX-512, returns false and writes
/// nothing: a matrix times a vector, say, would fill one lane in 16.
inline bool small_gemm(const float* a, std::int64_t a_row, std::int64_t a_col, const float* b, std::int64_t b_row,
                       std::int64_t b_col, float* c, std::int64_t ldc, std::int64_t rows, std::int64_t cols,
                       std::int64_t k) {
#if defined(__AVX512F__)
  using namespace small_gemm_detail;
  // How the rows and columns are blocked changes no bit: each element's sum runs in an order
  // fixed by k alone (the panel kernel's one accumulator per element over p = 0, 1, ...; the
  // dot kernel's 16 lanes and then its fixed tree of lane sums).
  if (b_col == 1 && cols >= 16) {
    // Rows of at least 4 vectors take blocks of up to 6 rows by 4 vectors (24 accumulators, 10
    // loads per 24 multiply-adds) rather than 8 by 2 or 3.
    even_blocks(rows, cols > 48 ? 6 : panel_rows, [&](std::int64_t i, std::int64_t r) {
      with_count<panel_rows>(static_cast<int>(r), [&]<int MR>() {
        panel_rows_of<MR>(a + i * a_row, a_row, a_col, b, b_row, c + i * ldc, ldc, k, cols);
      });
    });
    return true;
  }
  if (a_col == 1 && b_row == 1 && k >= 16) {
    for (std::int64_t i = 0; i < rows; i += dot_rows)
      with_count<dot_rows>(static_cast<int>(std::min<std::int64_t>(dot_rows, rows - i)), [&]<int MR>() {
        dot_rows_of<MR>(a + i * a_row, a_row, b, b_col, c + i * ldc, ldc, k, cols);
      });
    return true;
  }
#else
  (void)a, (void)a_row, (void)a_col, (void)b, (void)b_row, (void)b_col, (void)c, (void)ldc, (void)rows, (void)cols, (void)k;
#endif
  return false;
}

}  // namespace lt::kernels
