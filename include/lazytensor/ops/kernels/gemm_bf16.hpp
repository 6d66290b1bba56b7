#pragma once
// bf16 products with f32 accumulation: C[n, m] (f32) = A[n, k] B[k, m] (bf16). In kernels built
// for AVX512-BF16 (that capability level, ops/kernel_levels.hpp) by vdpbf16ps, which multiplies
// pairs of bf16 along k and adds them into f32 lanes: twice the products of an f32 FMA per instruction, from half the
// bytes. Elsewhere the caller widens the operands to f32 and runs the f32 GEMM (the plain path).
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <span>
#include <string_view>
#include <vector>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__)) && defined(__AVX512BF16__) && defined(__AVX512BW__) && \
    defined(__AVX512VL__)
#include <immintrin.h>
#define LAZYTENSOR_BF16_DOT 1
#endif

#include "lazytensor/core/array.hpp"
#include "lazytensor/core/bfloat16.hpp"
#include "lazytensor/core/cpu_capability.hpp"
#include "lazytensor/ops/kernels/lane_sums.hpp"
#include "lazytensor/ops/kernels/parallel.hpp"

namespace lt::kernels {

/// How bf16 products are computed: `plain` widens both operands to f32 and runs the f32
/// GEMM; `avx512_bf16` multiplies bf16 pairs by vdpbf16ps into f32 accumulators. The two give
/// different bits (the instruction adds each pair of products before the accumulator, and
/// flushes denormals), so a process keeps one for its whole life.
enum class Bf16Gemm { plain, avx512_bf16 };

/// Whether this CPU runs AVX512-BF16 (and the AVX-512 foundation and byte/word instructions
/// the kernel uses with it), where this copy of the kernels has them (`Level`).
template <int Level = LT_COMPILED_LEVEL>
bool cpu_has_avx512_bf16() {
#ifdef LAZYTENSOR_BF16_DOT
  return cpu_supports(CpuCapability::avx512_bf16);
#else
  return false;
#endif
}

/// The bf16 product path of this process: AVX512-BF16 where the CPU has it, unless
/// LT_BF16_GEMM=plain asks for the widening path (to compare the two).
template <int Level = LT_COMPILED_LEVEL>
Bf16Gemm bf16_gemm_path() {
  static const Bf16Gemm path = [] {
    const char* choice = std::getenv("LT_BF16_GEMM");
    if ((choice != nullptr && std::string_view(choice) == "plain") || !cpu_has_avx512_bf16()) return Bf16Gemm::plain;
    return Bf16Gemm::avx512_bf16;
  }();
  return path;
}

/// The bf16 product path, as the metrics' GemmBackend line names it.
inline const char* bf16_gemm_name() {
  return bf16_gemm_path() == Bf16Gemm::avx512_bf16 ? "bf16 products: AVX512-BF16 (vdpbf16ps), f32 accumulation"
                                                   : "bf16 products: widened to f32 panels, f32 GEMM";
}

/// Whether a product of operands `in` runs on bf16 instructions: both bf16, and the CPU has them.
inline bool product_takes_bf16(std::span<const View> in, const View&) {
  return in.size() == 2 && in[0].dtype == DType::bf16 && in[1].dtype == DType::bf16 &&
         bf16_gemm_path() == Bf16Gemm::avx512_bf16;
}

/// One bf16 product: A and B by element strides, C (f32) with unit column stride and row
/// stride ldc.
struct Bf16GemmArgs {
  const bfloat16* a;
  std::int64_t a_row, a_col;
  const bfloat16* b;
  std::int64_t b_row, b_col;
  float* c;
  std::int64_t ldc;
  std::int64_t n, k, m;
};

#ifdef LAZYTENSOR_BF16_DOT
namespace detail {

inline constexpr std::int64_t bf16_mr = 8;       // rows of C per micro-kernel
inline constexpr std::int64_t bf16_nr = 32;      // columns of C per micro-kernel: two vectors
inline constexpr std::int64_t bf16_kc = 256;     // k-pairs per block: B's block stays in L2
inline constexpr std::int64_t bf16_nc = 256;     // columns per block

/// B's columns [j0, j0 + cols) and k-pairs [p0, p0 + pairs) as vdpbf16ps reads them: per
/// 16 columns, per k-pair, 16 lanes of (B[2p, j], B[2p + 1, j]); zeros past k and past cols.
/// Packing reads B once per product, so its common layouts take wide moves: rows of B
/// contiguous (two rows' 16 values interleaved by one permute), or columns contiguous (a pair
/// is one 32-bit word of a column).
inline void pack_b_pairs(const Bf16GemmArgs& g, std::int64_t j0, std::int64_t cols, std::int64_t p0, std::int64_t pairs,
                         std::uint16_t* dst) {
  const std::int64_t panels = (cols + 15) / 16;
  const auto* b = reinterpret_cast<const std::uint16_t*>(g.b);
  const std::int64_t whole_pairs = std::clamp<std::int64_t>(g.k / 2 - p0, 0, pairs);  // both rows inside k
  // Lane l of the result: row 0's value l, then row 1's value l.
  alignas(64) static constexpr std::uint16_t interleave[32] = {0, 16, 1, 17, 2,  18, 3,  19, 4,  20, 5,  21, 6,  22, 7,  23,
                                                              8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31};
  const __m512i order = _mm512_load_si512(interleave);
  for (std::int64_t q = 0; q < panels; ++q) {
    const std::int64_t j = j0 + q * 16, lanes = std::min<std::int64_t>(16, j0 + cols - j);
    std::uint16_t* out = dst + q * pairs * 32;
    std::int64_t p = 0;
    if (g.b_col == 1) {
      const auto mask = static_cast<__mmask16>((1u << lanes) - 1u);
      for (; p < whole_pairs; ++p) {
        const std::uint16_t* row = b + 2 * (p0 + p) * g.b_row + j;
        const __m512i both = _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_maskz_loadu_epi16(mask, row)),
                                                _mm256_maskz_loadu_epi16(mask, row + g.b_row), 1);
        _mm512_storeu_si512(out + p * 32, _mm512_permutexvar_epi16(order, both));
      }
    } else if (g.b_row == 1) {
      for (std::int64_t l = 0; l < 16; ++l) {
        const std::uint16_t* column = b + (j + l) * g.b_col + 2 * p0;
        for (std::int64_t t = 0; t < whole_pairs; ++t) {
          std::uint32_t word = 0;
          if (l < lanes) std::memcpy(&word, column + 2 * t, 4);
          std::memcpy(out + t * 32 + 2 * l, &word, 4);
        }
      }
      p = whole_pairs;
    }
    for (; p < pairs; ++p)
      for (std::int64_t l = 0; l < 16; ++l) {
        const std::int64_t k0 = 2 * (p0 + p);
        const bool col = l < lanes;
        out[p * 32 + 2 * l] = col && k0 < g.k ? b[k0 * g.b_row + (j + l) * g.b_col] : 0;
        out[p * 32 + 2 * l + 1] = col && k0 + 1 < g.k ? b[(k0 + 1) * g.b_row + (j + l) * g.b_col] : 0;
      }
  }
}

/// A's rows [i0, i0 + rows) and k-pairs [p0, p0 + pairs): per row, the pairs as 32-bit words
/// (along a row of a row-major A, already so: copied).
inline void pack_a_pairs(const Bf16GemmArgs& g, std::int64_t i0, std::int64_t rows, std::int64_t p0, std::int64_t pairs,
                         std::uint32_t* dst) {
  const std::int64_t whole_pairs = std::clamp<std::int64_t>(g.k / 2 - p0, 0, pairs);
  for (std::int64_t r = 0; r < rows; ++r) {
    const std::int64_t i = i0 + r;
    std::int64_t p = 0;
    if (g.a_col == 1) {
      std::memcpy(dst + r * pairs, g.a + i * g.a_row + 2 * p0, static_cast<std::size_t>(whole_pairs) * 4);
      p = whole_pairs;
    }
    for (; p < pairs; ++p) {
      const std::int64_t k0 = 2 * (p0 + p);
      const std::uint32_t lo = g.a[i * g.a_row + k0 * g.a_col].bits;
      const std::uint32_t hi = k0 + 1 < g.k ? g.a[i * g.a_row + (k0 + 1) * g.a_col].bits : 0u;
      dst[r * pairs + p] = lo | hi << 16;
    }
  }
}

/// C[R rows, up to 32 columns] (+)= A pairs x B pairs over `pairs` k-pairs; `first`: C is
/// written, else added to. `mask0`/`mask1`: the columns of each vector that exist.
template <int R>
__attribute__((target("avx512f,avx512bw,avx512bf16"))) void bf16_micro(const std::uint32_t* a, std::int64_t pairs,
                                                                         const std::uint16_t* b0, const std::uint16_t* b1,
                                                                         float* c, std::int64_t ldc, bool first,
                                                                         __mmask16 mask0, __mmask16 mask1) {
  __m512 acc[R][2];
  for (int r = 0; r < R; ++r) {
    acc[r][0] = first ? _mm512_setzero_ps() : _mm512_maskz_loadu_ps(mask0, c + r * ldc);
    acc[r][1] = first || mask1 == 0 ? _mm512_setzero_ps() : _mm512_maskz_loadu_ps(mask1, c + r * ldc + 16);
  }
  for (std::int64_t p = 0; p < pairs; ++p) {
    const __m512bh x0 = (__m512bh)_mm512_loadu_si512(b0 + p * 32);
    const __m512bh x1 = (__m512bh)_mm512_loadu_si512(b1 + p * 32);
    for (int r = 0; r < R; ++r) {
      const __m512bh w = (__m512bh)_mm512_set1_epi32(static_cast<int>(a[r * pairs + p]));
      acc[r][0] = _mm512_dpbf16_ps(acc[r][0], w, x0);
      acc[r][1] = _mm512_dpbf16_ps(acc[r][1], w, x1);
    }
  }
  for (int r = 0; r < R; ++r) {
    _mm512_mask_storeu_ps(c + r * ldc, mask0, acc[r][0]);
    if (mask1 != 0) _mm512_mask_storeu_ps(c + r * ldc + 16, mask1, acc[r][1]);
  }
}

using Bf16Micro = void (*)(const std::uint32_t*, std::int64_t, const std::uint16_t*, const std::uint16_t*, float*,
                           std::int64_t, bool, __mmask16, __mmask16);
inline constexpr Bf16Micro bf16_micros[bf16_mr] = {&bf16_micro<1>, &bf16_micro<2>, &bf16_micro<3>, &bf16_micro<4>,
                                                   &bf16_micro<5>, &bf16_micro<6>, &bf16_micro<7>, &bf16_micro<8>};

inline __mmask16 lanes_mask(std::int64_t n) {
  return n >= 16 ? static_cast<__mmask16>(0xffff) : n <= 0 ? 0 : static_cast<__mmask16>((1u << n) - 1u);
}

/// B packed whole by pack_b_pairs: per 16 columns, every k-pair.
struct PackedB {
  std::vector<std::uint16_t> pairs;
  std::int64_t all_pairs = 0;
  const std::uint16_t* panel(std::int64_t j, std::int64_t p0) const { return pairs.data() + ((j / 16) * all_pairs + p0) * 32; }
};

/// Packs B's 16-column panels [q0, q1).
inline void pack_b_panels(const Bf16GemmArgs& g, PackedB& b, std::int64_t q0, std::int64_t q1) {
  for (std::int64_t q = q0; q < q1; ++q)
    pack_b_pairs(g, q * 16, std::min<std::int64_t>(16, g.m - q * 16), 0, b.all_pairs, b.pairs.data() + q * b.all_pairs * 32);
}

/// C[i0:i1, j0:j1] over every k, from B packed whole and A packed per strip and k-block.
/// Each element of C sums its k-pairs in ascending order, whoever runs it.
inline void bf16_block(const Bf16GemmArgs& g, const PackedB& b, std::int64_t i0, std::int64_t i1, std::int64_t j0,
                       std::int64_t j1) {
  const std::int64_t cols = j1 - j0;
  thread_local std::vector<std::uint32_t> ap;
  ap.resize(static_cast<std::size_t>(bf16_mr * bf16_kc));
  for (std::int64_t p0 = 0; p0 < b.all_pairs; p0 += bf16_kc) {
    const std::int64_t pairs = std::min(bf16_kc, b.all_pairs - p0);
    for (std::int64_t i = i0; i < i1; i += bf16_mr) {
      const std::int64_t rows = std::min(bf16_mr, i1 - i);
      pack_a_pairs(g, i, rows, p0, pairs, ap.data());
      for (std::int64_t j = 0; j < cols; j += bf16_nr) {
        const std::uint16_t* b0 = b.panel(j0 + j, p0);
        const std::uint16_t* b1 = j + 16 < cols ? b.panel(j0 + j + 16, p0) : b0;
        bf16_micros[rows - 1](ap.data(), pairs, b0, b1, g.c + i * g.ldc + j0 + j, g.ldc, p0 == 0,
                              lanes_mask(cols - j), lanes_mask(cols - j - 16));
      }
    }
  }
}

/// C[MR rows, NR columns] as dot products of A's rows and B's columns, both contiguous along
/// k: per 32 values of k, MR + NR loads and MR x NR vdpbf16ps (the last values masked), each
/// element's 16 lanes summed at the end. Nothing is packed: B = W^T of a row-major weight W is
/// read as it lies.
template <int MR, int NR>
__attribute__((target("avx512f,avx512bw,avx512bf16"))) void bf16_dot_block(const std::uint16_t* a, std::int64_t lda,
                                                                             const std::uint16_t* b, std::int64_t ldb,
                                                                             float* c, std::int64_t ldc, std::int64_t k) {
  __m512 acc[MR][NR];
  for (int i = 0; i < MR; ++i)
    for (int j = 0; j < NR; ++j) acc[i][j] = _mm512_setzero_ps();
  // Full steps, then one masked: with the mask in the loop, GCC keeps the accumulators on the
  // stack and stores each of them every step.
  std::int64_t p = 0;
  for (; p + 32 <= k; p += 32) {
    __m512bh av[MR], bv[NR];
    for (int i = 0; i < MR; ++i) av[i] = (__m512bh)_mm512_loadu_si512(a + i * lda + p);
    for (int j = 0; j < NR; ++j) bv[j] = (__m512bh)_mm512_loadu_si512(b + j * ldb + p);
    for (int i = 0; i < MR; ++i)
      for (int j = 0; j < NR; ++j) acc[i][j] = _mm512_dpbf16_ps(acc[i][j], av[i], bv[j]);
  }
  if (p < k) {
    const auto mask = static_cast<__mmask32>((std::uint32_t{1} << (k - p)) - 1u);
    __m512bh av[MR], bv[NR];
    for (int i = 0; i < MR; ++i) av[i] = (__m512bh)_mm512_maskz_loadu_epi16(mask, a + i * lda + p);
    for (int j = 0; j < NR; ++j) bv[j] = (__m512bh)_mm512_maskz_loadu_epi16(mask, b + j * ldb + p);
    for (int i = 0; i < MR; ++i)
      for (int j = 0; j < NR; ++j) acc[i][j] = _mm512_dpbf16_ps(acc[i][j], av[i], bv[j]);
  }
  store_lane_sums(acc, c, ldc);
}

inline constexpr int bf16_dot = 4;  // rows and columns of C per dot block
using Bf16DotBlock = void (*)(const std::uint16_t*, std::int64_t, const std::uint16_t*, std::int64_t, float*,
                              std::int64_t, std::int64_t);
template <int MR>
inline constexpr Bf16DotBlock bf16_dot_row[bf16_dot] = {&bf16_dot_block<MR, 1>, &bf16_dot_block<MR, 2>,
                                                        &bf16_dot_block<MR, 3>, &bf16_dot_block<MR, 4>};
inline constexpr const Bf16DotBlock* bf16_dot_blocks[bf16_dot] = {bf16_dot_row<1>, bf16_dot_row<2>, bf16_dot_row<3>,
                                                                  bf16_dot_row<4>};

/// C's columns [j0, j1), every row, by dot blocks: B's four columns stay in L1 while every
/// row of A passes them.
inline void bf16_dot_columns(const Bf16GemmArgs& g, std::int64_t j0, std::int64_t j1) {
  const auto* a = reinterpret_cast<const std::uint16_t*>(g.a);
  const auto* b = reinterpret_cast<const std::uint16_t*>(g.b);
  for (std::int64_t j = j0; j < j1; j += bf16_dot) {
    const auto nr = static_cast<int>(std::min<std::int64_t>(bf16_dot, j1 - j));
    for (std::int64_t i = 0; i < g.n; i += bf16_dot) {
      const auto mr = static_cast<int>(std::min<std::int64_t>(bf16_dot, g.n - i));
      bf16_dot_blocks[mr - 1][nr - 1](a + i * g.a_row, g.a_row, b + j * g.b_col, g.b_col, g.c + i * g.ldc + j, g.ldc, g.k);
    }
  }
}

/// Whether C = A B runs as dot products (bf16_dot_columns) rather than on packed panels: A's
/// rows and B's columns contiguous along k (x W^T, W row-major, as linear multiplies) and few
/// rows, which would not repay packing B. A choice by shape alone, so the same bits each run.
inline bool bf16_dot_fits(const Bf16GemmArgs& g) { return g.a_col == 1 && g.b_row == 1 && g.k >= 32 && g.n <= 256; }

}  // namespace detail
#endif

/// C = A B by AVX512-BF16 on the calling thread (a product among many run in parallel).
inline void gemm_bf16_serial(const Bf16GemmArgs& g) {
#ifdef LAZYTENSOR_BF16_DOT
  if (g.n <= 0 || g.m <= 0) return;
  if (g.k <= 0) {
    for (std::int64_t i = 0; i < g.n; ++i) std::fill_n(g.c + i * g.ldc, g.m, 0.0f);
    return;
  }
  detail::PackedB b;
  b.all_pairs = (g.k + 1) / 2;
  b.pairs.resize(static_cast<std::size_t>((g.m + 15) / 16 * b.all_pairs * 32));
  detail::pack_b_panels(g, b, 0, (g.m + 15) / 16);
  for (std::int64_t j0 = 0; j0 < g.m; j0 += detail::bf16_nc) detail::bf16_block(g, b, 0, g.n, j0, std::min(g.m, j0 + detail::bf16_nc));
#else
  (void)g;
  fail("bf16 products by AVX512-BF16 are not compiled in for this target");
#endif
}

/// C = A B by AVX512-BF16, in parallel over strips of rows of C (a fixed partition: the same
/// bits for any number of threads). Only where bf16_gemm_path() is avx512_bf16.
inline void gemm_bf16(const Bf16GemmArgs& g) {
  if (g.n <= 0 || g.m <= 0) return;
  if (g.k <= 0) {
    for (std::int64_t i = 0; i < g.n; ++i) std::fill_n(g.c + i * g.ldc, g.m, 0.0f);
    return;
  }
#ifdef LAZYTENSOR_BF16_DOT
  if (detail::bf16_dot_fits(g)) {  // columns in blocks of 32, a fixed partition
    parallel_blocks((g.m + 31) / 32, 1, [&](std::int64_t q0, std::int64_t q1) {
      detail::bf16_dot_columns(g, q0 * 32, std::min(g.m, q1 * 32));
    });
    return;
  }
  // Blocks of 64 rows by bf16_nc columns, as a fixed partition.
  const std::int64_t strip = 8 * detail::bf16_mr;
  const std::int64_t strips = (g.n + strip - 1) / strip, blocks = (g.m + detail::bf16_nc - 1) / detail::bf16_nc;
  // B packed once, its panels in parallel, then read by every strip.
  detail::PackedB b;
  b.all_pairs = (g.k + 1) / 2;
  const std::int64_t panels = (g.m + 15) / 16;
  b.pairs.resize(static_cast<std::size_t>(panels * b.all_pairs * 32));
  parallel_blocks(panels, 1, [&](std::int64_t q0, std::int64_t q1) { detail::pack_b_panels(g, b, q0, q1); });
  parallel_blocks(strips * blocks, 1, [&](std::int64_t t0, std::int64_t t1) {
    for (std::int64_t t = t0; t < t1; ++t) {
      const std::int64_t i0 = t / blocks * strip, j0 = t % blocks * detail::bf16_nc;
      detail::bf16_block(g, b, i0, std::min(g.n, i0 + strip), j0, std::min(g.m, j0 + detail::bf16_nc));
    }
  });
#else
  fail("bf16 products by AVX512-BF16 are not compiled in for this target");
#endif
}

}  // namespace lt::kernels
