// bf16 products: C = A B with A, B [n, n] in bf16 on the lazy device (one step: the product,
// its barrier and wait; the result in bf16, as PyTorch's), beside the same product in f32, timed
// in turns, and the peaks no product can pass: independent vdpbf16ps (bf16 pairs into f32
// lanes) and independent f32 FMAs. n = 2048 (1024 with --quick). PyTorch's bf16 matmul is
// peers/bf16_gemm_torch.py, run beside it.
//
//   bench_bf16_gemm [--quick]
#include <cstdio>
#include <cstring>
#include <functional>
#include <vector>

#include <lazytensor/lazytensor.hpp>

#include "common/fma_peak.hpp"
#include "common/timing.hpp"
#include "common/turns.hpp"

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  const std::int64_t n = quick ? 1024 : 2048;
  const int rounds = quick ? 5 : 11;
  const double gflop = 2.0 * static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n) / 1e9;
  auto dev = lt::device();
  lt::manual_seed(0);
  lt::Tensor a = lt::randn({n, n}, dev), b = lt::randn({n, n}, dev);
  lt::Tensor a16 = a.to(lt::bf16), b16 = b.to(lt::bf16);
  lt::sync();
  lt::wait_device_ops();
  auto product = [](const lt::Tensor& x, const lt::Tensor& y) {
    return [&x, &y] {
      lt::Tensor c = x.matmul(y);
      lt::sync();
      lt::wait_device_ops();
      bench::keep(c);
    };
  };
  std::printf("bf16 GEMM, C[%lld, %lld] = A B, one step each (medians of %d in turns)\n", static_cast<long long>(n),
              static_cast<long long>(n), rounds);
  std::printf("  GEMM backend: %s\n", lt::metrics::info("GemmBackend").c_str());
  for (int threads : {2, 1}) {
    std::vector<std::function<void()>> fs = {product(a16, b16), product(a, b)};
    std::vector<double> t = bench::with_threads(threads, [&] { return bench::medians_in_turns(fs, {1, 1}, rounds); });
    const double fma = bench::fma_peak_gflops(threads), dot = bench::bf16_dot_peak_gflops(threads);
    std::printf(" %d thread%s (ratio: GFLOP/s / the bf16 dot peak)\n", threads, threads > 1 ? "s" : "");
    const double peak = dot > 0 ? dot : fma;
    bench::print_row("lazytensor bf16", 1e3 * t[0], "ms", gflop / t[0] / peak, gflop / t[0], "GFLOP/s");
    bench::print_row("lazytensor f32", 1e3 * t[1], "ms", gflop / t[1] / peak, gflop / t[1], "GFLOP/s");
    if (dot > 0) bench::print_row("bf16 dot peak", 1e3 * gflop / dot, "ms", 1.0, dot, "GFLOP/s");
    else std::printf("  bf16 dot peak: this CPU has no AVX512-BF16 (ratios against the FMA peak)\n");
    bench::print_row("FMA peak", 1e3 * gflop / fma, "ms", fma / peak, fma, "GFLOP/s");
  }
  std::printf("  (targets without AMX: bf16 >= 0.6 of the bf16 dot peak, and >= PyTorch's bf16 matmul)\n");
}
