#pragma once
// The CPU's multiply-add peaks, f32 and bf16: what no product of any library can beat, so that
// a target beyond one is known for one (BENCHMARKS.md's W6 and GPT step). Measured with the
// widest instructions the CPU runs, whatever flags compiled the benchmark: a default build (no
// -march) times the same peak as a native one.
#include <immintrin.h>

#include <oneapi/tbb/parallel_for.h>

#include <lazytensor/core/cpu_capability.hpp>

#include "common/timing.hpp"

namespace bench {

namespace detail {
/// `iterations` rounds of one multiply-add on each of 12 independent accumulators of type V:
/// enough to keep every FMA pipe busy through the instruction's latency. Distinct starts: equal
/// accumulators would let the compiler run one chain for all. (A macro: a lambda in a function
/// compiled for a target does not inherit it, and the intrinsics must inline.)
#define LT_BENCH_FMA_CHAINS(V, splat, madd, first)                                         \
  const V scale = splat(0.9999999f), shift = splat(1e-7f);                                \
  V acc[12];                                                                               \
  for (int k = 0; k < 12; ++k) acc[k] = splat(0.5f + 0.01f * static_cast<float>(k));      \
  for (long i = 0; i < iterations; ++i)                                                    \
    for (V& a : acc) a = madd(a, scale, shift);                                            \
  float total = 0;                                                                         \
  for (V& a : acc) total += first(a);                                                      \
  return total

__attribute__((target("avx512f"))) inline float fma_chains_avx512(long iterations) {
  LT_BENCH_FMA_CHAINS(__m512, _mm512_set1_ps, _mm512_fmadd_ps, _mm512_cvtss_f32);
}
__attribute__((target("avx2,fma"))) inline float fma_chains_avx2(long iterations) {
  LT_BENCH_FMA_CHAINS(__m256, _mm256_set1_ps, _mm256_fmadd_ps, _mm256_cvtss_f32);
}
/// 12 independent chains of vdpbf16ps: each adds 16 pairs of bf16 products into 16 f32 lanes,
/// 64 flops an instruction.
__attribute__((target("avx512f,avx512bf16"))) inline float bf16_dot_chains(long iterations) {
  const __m512bh a = _mm512_cvtne2ps_pbh(_mm512_set1_ps(0.999f), _mm512_set1_ps(1.001f));
  const __m512bh b = _mm512_cvtne2ps_pbh(_mm512_set1_ps(1e-7f), _mm512_set1_ps(-1e-7f));
  __m512 acc[12];
  for (int k = 0; k < 12; ++k) acc[k] = _mm512_set1_ps(0.5f + 0.01f * static_cast<float>(k));
  for (long i = 0; i < iterations; ++i)
    for (__m512& x : acc) x = _mm512_dpbf16_ps(x, a, b);
  float total = 0;
  for (__m512& x : acc) total += _mm512_cvtss_f32(x);
  return total;
}
/// No FMA below AVX2: a multiply and an add, two flops, as a product's inner loop has them.
inline __m128 mul_add_sse(__m128 a, __m128 b, __m128 c) { return _mm_add_ps(_mm_mul_ps(a, b), c); }
inline float fma_chains_sse(long iterations) { LT_BENCH_FMA_CHAINS(__m128, _mm_set1_ps, mul_add_sse, _mm_cvtss_f32); }
#undef LT_BENCH_FMA_CHAINS
}  // namespace detail

/// GFLOP/s of multiply-adds on the CPU's widest vectors under `threads` threads, with nothing
/// read or written.
inline double fma_peak_gflops(int threads, int reps = 5) {
  constexpr long iterations = 1L << 21;
  const bool avx512 = lt::cpu_supports(lt::CpuCapability::avx512), avx2 = lt::cpu_supports(lt::CpuCapability::avx2);
  const int lanes = avx512 ? 16 : avx2 ? 8 : 4;
  auto run = [&] {
    tbb::parallel_for(0, threads, [&](int) {
      keep(avx512 ? detail::fma_chains_avx512(iterations)
                  : avx2 ? detail::fma_chains_avx2(iterations) : detail::fma_chains_sse(iterations));
    });
  };
  const double seconds = with_threads(threads, [&] { return median_seconds(run, reps); });
  return 2.0 * lanes * 12 * static_cast<double>(iterations) * threads / seconds / 1e9;
}

/// GFLOP/s of bf16 dot products (vdpbf16ps, f32 sums) under `threads` threads, with nothing
/// read or written; 0 where the CPU lacks AVX512-BF16. What a bf16 product on vectors can reach.
inline double bf16_dot_peak_gflops(int threads, int reps = 5) {
  if (!lt::cpu_supports(lt::CpuCapability::avx512_bf16)) return 0;
  constexpr long iterations = 1L << 21;
  auto run = [&] { tbb::parallel_for(0, threads, [&](int) { keep(detail::bf16_dot_chains(iterations)); }); };
  const double seconds = with_threads(threads, [&] { return median_seconds(run, reps); });
  return 64.0 * 12 * static_cast<double>(iterations) * threads / seconds / 1e9;
}

}  // namespace bench
