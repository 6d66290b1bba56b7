// The limits every target is measured against (BENCHMARKS.md), at 2 and 1 threads: STREAM
// triad in GB/s and 2048^3 SGEMM in GFLOP/s, Eigen and (where found) OpenBLAS's cblas_sgemm.
// The ratio column compares with the figure BENCHMARKS.md quotes, to show how this run's
// machine stands against the one the targets were set on.
//
//   bench_limits [--quick]
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "common/fma_peak.hpp"
#include "common/limits.hpp"
#include "common/timing.hpp"

namespace {

struct Quoted {
  double stream, eigen, openblas;
};
// BENCHMARKS.md's figures (STREAM's 34-38 GB/s taken at its middle).
constexpr Quoted quoted_2{36.0, 127.0, 182.0};
constexpr Quoted quoted_1{17.8, 69.0, 93.0};

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  const int n = quick ? 1024 : 2048;
  bench::SgemmOperands m(n);

  std::printf("limits (medians; ratio: this run / the figure in BENCHMARKS.md)\n");
#ifdef LAZYTENSOR_BENCH_HAVE_CBLAS
  std::printf("  CBLAS kernels: %s\n", *bench::cblas_corename() != 0 ? bench::cblas_corename() : "not OpenBLAS");
  if (std::strcmp(bench::cblas_corename(), "Haswell") == 0 && __builtin_cpu_supports("avx512f"))
    std::printf("  note: AVX2 kernels on an AVX-512 CPU (OPENBLAS_CORETYPE=%s): unset it for the true limit\n",
                std::getenv("OPENBLAS_CORETYPE") != nullptr ? std::getenv("OPENBLAS_CORETYPE") : "");
  if (!bench::cblas_threads_settable())
    std::printf("  note: CBLAS has no openblas_set_num_threads; its threads follow OPENBLAS_NUM_THREADS\n");
#endif
  for (int threads : {2, 1}) {
    const Quoted& q = threads == 2 ? quoted_2 : quoted_1;
    std::printf(" %d thread%s\n", threads, threads > 1 ? "s" : "");
    double stream = bench::stream_gbs(threads, quick ? 5 : 11);
    bench::print_row("STREAM triad", stream, "GB/s", stream / q.stream);
    double eigen = bench::eigen_sgemm_gflops(m, threads, quick ? 3 : 5);
    const double peak = bench::fma_peak_gflops(threads);
    std::printf("  FMA peak (independent multiply-adds): %.1f GFLOP/s\n", peak);
    if (const double bf16 = bench::bf16_dot_peak_gflops(threads); bf16 > 0)
      std::printf("  bf16 dot peak (independent vdpbf16ps): %.1f GFLOP/s (%.2fx the FMA peak)\n", bf16, bf16 / peak);
    else
      std::printf("  bf16 dot peak: this CPU has no AVX512-BF16\n");
    std::printf("  (SGEMM %d^3)\n", n);
    bench::print_row("SGEMM Eigen", eigen, "GFLOP/s", eigen / q.eigen);
#ifdef LAZYTENSOR_BENCH_HAVE_CBLAS
    double blas = bench::cblas_sgemm_gflops(m, threads, quick ? 3 : 5);
    bench::print_row("SGEMM cblas_sgemm", blas, "GFLOP/s", blas / q.openblas);
#else
    std::printf("  SGEMM cblas_sgemm: no CBLAS found at configure time\n");
#endif
  }
}
