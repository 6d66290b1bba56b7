#pragma once
// The memory bandwidth limit measured in the same run: STREAM's triad a[i] = b[i] + s * c[i]
// over three arrays of 32M floats on huge pages, 12 bytes per element, with TBB over fixed
// blocks.
#include <cstdint>

#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/parallel_for.h>

#include "common/huge_pages.hpp"
#include "common/timing.hpp"

namespace bench {

/// GB/s of the triad under the current thread limit (median of `reps`).
inline double stream_triad_gbs(int reps = 11) {
  const std::int64_t n = std::int64_t{1} << 25;
  const auto size = static_cast<std::size_t>(n);
  HugePageArray<float> a = huge_page_array(size, 0.0f), b = huge_page_array(size, 1.0f), c = huge_page_array(size, 2.0f);
  const float s = 3.0f;
  auto triad = [&] {
    tbb::parallel_for(tbb::blocked_range<std::int64_t>(0, n, 1 << 16), [&](const tbb::blocked_range<std::int64_t>& r) {
      for (std::int64_t i = r.begin(); i < r.end(); ++i) a[i] = b[i] + s * c[i];
    }, tbb::simple_partitioner{});
  };
  double t = median_seconds(triad, reps);
  keep(a[0]);
  return 12.0 * static_cast<double>(n) / t / 1e9;
}

/// The triad's GB/s with TBB limited to `threads`.
inline double stream_gbs(int threads, int reps = 11) {
  return with_threads(threads, [&] { return stream_triad_gbs(reps); });
}

}  // namespace bench
