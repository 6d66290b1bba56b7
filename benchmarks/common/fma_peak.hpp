#pragma once
// The CPU's multiply-add peak: what no product of any library can beat, so that a target
// beyond it is known for one (BENCHMARKS.md's W6 and GPT step).
#include <Eigen/Core>
#include <oneapi/tbb/parallel_for.h>

#include "common/timing.hpp"

namespace bench {

/// GFLOP/s of fused multiply-adds on whole packets under `threads` threads, with nothing read
/// or written: each thread updates 12 independent accumulators, enough to keep every FMA pipe
/// busy through the instruction's latency.
inline double fma_peak_gflops(int threads, int reps = 5) {
  using P = Eigen::internal::packet_traits<float>::type;
  constexpr int lanes = Eigen::internal::packet_traits<float>::size, accumulators = 12;
  constexpr long iterations = 1L << 21;
  auto run = [&] {
    tbb::parallel_for(0, threads, [&](int) {
      const P scale = Eigen::internal::pset1<P>(0.9999999f), shift = Eigen::internal::pset1<P>(1e-7f);
      P acc[accumulators];
      // Distinct starts: equal accumulators would let the compiler run one chain for all.
      for (int k = 0; k < accumulators; ++k) acc[k] = Eigen::internal::pset1<P>(0.5f + 0.01f * static_cast<float>(k));
      for (long i = 0; i < iterations; ++i)
        for (P& a : acc) a = Eigen::internal::pmadd(a, scale, shift);
      P total = acc[0];
      for (int k = 1; k < accumulators; ++k) total = Eigen::internal::padd(total, acc[k]);
      keep(Eigen::internal::predux(total));
    });
  };
  const double seconds = with_threads(threads, [&] { return median_seconds(run, reps); });
  return 2.0 * lanes * accumulators * static_cast<double>(iterations) * threads / seconds / 1e9;
}

}  // namespace bench
