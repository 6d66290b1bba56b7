#pragma once
// The two limits of BENCHMARKS.md, measured in the run that quotes them (the machine is shared
// and noisy, so a figure from another run is no yardstick): STREAM's triad for memory bandwidth
// and a 2048^3 SGEMM for arithmetic, each under a given thread count.
#include <algorithm>

#include <Eigen/Core>
#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/parallel_for.h>

#include "common/stream.hpp"
#include "common/timing.hpp"

#ifdef LAZYTENSOR_BENCH_HAVE_CBLAS
#include <cblas.h>
// OpenBLAS runs its own threads, outside TBB's limit. Weak, so that a CBLAS without this call
// (the reference one) still links; it is then null and OPENBLAS_NUM_THREADS is all there is.
extern "C" void openblas_set_num_threads(int) __attribute__((weak));
extern "C" char* openblas_get_corename() __attribute__((weak));
#endif

namespace bench {

/// Square operands for an n^3 product, filled (and so touched) before any timing.
struct SgemmOperands {
  Eigen::MatrixXf a, b, c;
  explicit SgemmOperands(int n)
      : a(Eigen::MatrixXf::Random(n, n)), b(Eigen::MatrixXf::Random(n, n)), c(Eigen::MatrixXf::Zero(n, n)) {}
  [[nodiscard]] double gflop() const { return 2.0 * static_cast<double>(a.rows()) * a.cols() * b.cols() / 1e9; }
};

/// Eigen `noalias()` GEMM in GFLOP/s under `threads` TBB threads. Eigen's own GEMM threads only
/// through OpenMP, which these programs do not use; so, as the library's kernels do, TBB splits
/// C into row blocks and each block is one single-threaded Eigen product.
inline void eigen_sgemm(SgemmOperands& m) {
  const Eigen::Index n = m.a.rows();
  // Blocks of 256 rows: enough of them to balance 2 threads, big enough that repacking B per
  // block costs little.
  const Eigen::Index rows = std::min<Eigen::Index>(256, n);
  tbb::parallel_for(tbb::blocked_range<Eigen::Index>(0, n, rows), [&](const tbb::blocked_range<Eigen::Index>& r) {
    const auto len = static_cast<Eigen::Index>(r.size());
    m.c.middleRows(r.begin(), len).noalias() = m.a.middleRows(r.begin(), len) * m.b;
  }, tbb::simple_partitioner{});
}

inline double eigen_sgemm_gflops(SgemmOperands& m, int threads, int reps = 5) {
  double t = with_threads(threads, [&] { return median_seconds([&] { eigen_sgemm(m); }, reps); });
  keep(m.c);
  return m.gflop() / t;
}

#ifdef LAZYTENSOR_BENCH_HAVE_CBLAS
/// Whether the CBLAS thread count can be set per call (OpenBLAS) or only from the environment.
inline bool cblas_threads_settable() { return openblas_set_num_threads != nullptr; }

/// OpenBLAS's kernel family ("Haswell", "Cooperlake", ...), or "" when not OpenBLAS. It is
/// chosen at load from the CPU, unless OPENBLAS_CORETYPE forces one: Haswell's AVX2 kernels on an
/// AVX-512 CPU run at about 60% of its own, which would understate the limit.
inline const char* cblas_corename() { return openblas_get_corename != nullptr ? openblas_get_corename() : ""; }

/// The n^3 product as one cblas_sgemm call, on OpenBLAS's threads as they are set.
inline void cblas_sgemm_square(SgemmOperands& m) {
  const int n = static_cast<int>(m.a.rows());
  cblas_sgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, m.a.data(), n, m.b.data(), n, 0.0f,
              m.c.data(), n);
}

/// cblas_sgemm in GFLOP/s with OpenBLAS set to `threads` threads (when it can be set).
inline double cblas_sgemm_gflops(SgemmOperands& m, int threads, int reps = 5) {
  if (cblas_threads_settable()) openblas_set_num_threads(threads);
  double t = median_seconds([&] { cblas_sgemm_square(m); }, reps);
  keep(m.c);
  return m.gflop() / t;
}
#endif

}  // namespace bench
