#pragma once
// The lane sums of 16 AVX-512 accumulators at once: how the dot-product kernels (f32 in
// small_gemm.hpp, bf16 in gemm_bf16.hpp) finish a 4 x 4 block of C.
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>

#include <cstdint>

namespace lt::kernels {

/// The sums of the lanes of 16 accumulators, as one vector: lane 4 i + j holds the sum of
/// acc[4 j + i]. Each sum adds lane l to lane l + 8, then l + 4, l + 2 and l + 1, the order of
/// _mm512_reduce_add_ps, in 15 additions instead of 16 reductions. For AVX-512 code only (the
/// attribute lets code built for AVX-512 at run time inline it).
[[gnu::always_inline]] __attribute__((target("avx512f"))) inline __m512 lane_sums_of_16(const __m512* acc) {
  __m512 r[8], s[4], u[2];
  for (int q = 0; q < 8; ++q)  // lanes l and l + 8: acc[2q] in lanes 0-7, acc[2q + 1] in 8-15
    r[q] = _mm512_add_ps(_mm512_shuffle_f32x4(acc[2 * q], acc[2 * q + 1], 0x44),
                         _mm512_shuffle_f32x4(acc[2 * q], acc[2 * q + 1], 0xEE));
  for (int w = 0; w < 4; ++w)  // then l + 4: acc[4w + c] in 128-bit chunk c
    s[w] = _mm512_add_ps(_mm512_shuffle_f32x4(r[2 * w], r[2 * w + 1], 0x88),
                         _mm512_shuffle_f32x4(r[2 * w], r[2 * w + 1], 0xDD));
  for (int v = 0; v < 2; ++v)  // then l + 2
    u[v] = _mm512_add_ps(_mm512_unpacklo_ps(s[2 * v], s[2 * v + 1]), _mm512_unpackhi_ps(s[2 * v], s[2 * v + 1]));
  // then l + 1: chunk c, lane t holds acc[4t + c]
  return _mm512_add_ps(_mm512_castpd_ps(_mm512_unpacklo_pd(_mm512_castps_pd(u[0]), _mm512_castps_pd(u[1]))),
                       _mm512_castpd_ps(_mm512_unpackhi_pd(_mm512_castps_pd(u[0]), _mm512_castps_pd(u[1]))));
}

/// Stores the lane sums of a dot kernel's MR x NR accumulators as C's block at `c` (row stride
/// `ldc`): a whole 4 x 4 block through lane_sums_of_16, other blocks a sum at a time; the same
/// order of additions either way.
template <int MR, int NR>
[[gnu::always_inline]] __attribute__((target("avx512f"))) inline void store_lane_sums(const __m512 (&acc)[MR][NR],
                                                                                     float* c, std::int64_t ldc) {
  if constexpr (MR == 4 && NR == 4) {
    __m512 t[16];
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < 4; ++j) t[4 * j + i] = acc[i][j];
    const __m512 sums = lane_sums_of_16(t);  // chunk i: row i
    _mm_storeu_ps(c, _mm512_extractf32x4_ps(sums, 0));
    _mm_storeu_ps(c + ldc, _mm512_extractf32x4_ps(sums, 1));
    _mm_storeu_ps(c + 2 * ldc, _mm512_extractf32x4_ps(sums, 2));
    _mm_storeu_ps(c + 3 * ldc, _mm512_extractf32x4_ps(sums, 3));
  } else {
    for (int i = 0; i < MR; ++i)
      for (int j = 0; j < NR; ++j) c[i * ldc + j] = _mm512_reduce_add_ps(acc[i][j]);
  }
}

}  // namespace lt::kernels
#endif
