#pragma once
// W1's expression hand-written as an Eigen array expression, over TBB blocks: the peer a
// fused kernel is measured against.
#include <cstdint>

#include <Eigen/Core>
#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/parallel_for.h>

namespace bench {

/// out = max(a*b + c, 0) * 0.5 - b over [0, n), in blocks of at most `grain`.
inline void eigen_w1(const float* a, const float* b, const float* c, float* out, std::int64_t n, std::int64_t grain) {
  tbb::parallel_for(
      tbb::blocked_range<std::int64_t>(0, n, grain),
      [&](const tbb::blocked_range<std::int64_t>& r) {
        auto len = static_cast<Eigen::Index>(r.size());
        Eigen::Map<const Eigen::ArrayXf> A(a + r.begin(), len), B(b + r.begin(), len), C(c + r.begin(), len);
        Eigen::Map<Eigen::ArrayXf> O(out + r.begin(), len);
        O = (A * B + C).max(0.0f) * 0.5f - B;
      },
      tbb::simple_partitioner{});
}

}  // namespace bench
