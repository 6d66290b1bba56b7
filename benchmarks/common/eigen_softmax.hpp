#pragma once
// Softmax along rows, fused by hand with Eigen: per row, the max, exp(x - max) written to the
// output, its sum, and one scaling pass, rows split over TBB. The peer W2 is measured against.
#include <cstdint>

#include <Eigen/Core>
#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/parallel_for.h>

namespace bench {

inline void eigen_softmax_rows(const float* x, float* y, std::int64_t rows, std::int64_t cols) {
  tbb::parallel_for(
      tbb::blocked_range<std::int64_t>(0, rows, 8),
      [&](const tbb::blocked_range<std::int64_t>& r) {
        for (std::int64_t i = r.begin(); i < r.end(); ++i) {
          Eigen::Map<const Eigen::ArrayXf> in(x + i * cols, static_cast<Eigen::Index>(cols));
          Eigen::Map<Eigen::ArrayXf> out(y + i * cols, static_cast<Eigen::Index>(cols));
          float m = in.maxCoeff();
          out = (in - m).exp();
          out *= 1.0f / out.sum();
        }
      },
      tbb::simple_partitioner{});
}

}  // namespace bench
