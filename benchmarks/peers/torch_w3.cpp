// W3 with LibTorch eager: MLP inference, batch 64, log_softmax(L3(relu(L2(relu(L1(x)))))) with
// torch::nn::Linear layers 784->1024->1024->10 under NoGradGuard, the same input every step,
// at 2 and 1 threads, beside the same run's cblas_sgemm 2048^3 limit (where found).
//
//   bench_torch_w3 [--quick]
#include <cstdio>
#include <cstring>

#include <torch/torch.h>

#include "common/limits.hpp"
#include "common/timing.hpp"

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  const int reps = quick ? 21 : 201;
  const double gflop = 2.0 * 64 * (784 * 1024 + 1024 * 1024 + 1024 * 10) / 1e9;
  torch::NoGradGuard no_grad;
  torch::manual_seed(0);
  torch::nn::Linear l1(784, 1024), l2(1024, 1024), l3(1024, 10);
  torch::Tensor x = torch::randn({64, 784});
  auto step = [&] {
    torch::Tensor y = torch::log_softmax(l3(torch::relu(l2(torch::relu(l1(x))))), 1);
    bench::keep(y);
  };
#ifdef LAZYTENSOR_BENCH_HAVE_CBLAS
  bench::SgemmOperands sgemm(quick ? 1024 : 2048);
#endif

  std::printf("W3 LibTorch %s eager, MLP 784-1024-1024-10, batch 64 (median of %d steps; ratio: GFLOP/s / the "
              "same run's cblas_sgemm limit)\n", TORCH_VERSION, reps);
#ifdef LAZYTENSOR_BENCH_HAVE_CBLAS
  std::printf("  CBLAS kernels: %s\n", *bench::cblas_corename() != 0 ? bench::cblas_corename() : "not OpenBLAS");
#endif
  for (int threads : {2, 1}) {
    double limit = 0;
#ifdef LAZYTENSOR_BENCH_HAVE_CBLAS
    limit = bench::cblas_sgemm_gflops(sgemm, threads, quick ? 3 : 7);
#endif
    at::set_num_threads(threads);
    double t = bench::median_seconds(step, reps);
    std::printf(" %d thread%s (at::get_num_threads() = %d)\n", threads, threads > 1 ? "s" : "", at::get_num_threads());
    if (limit > 0) bench::print_row("SGEMM limit, cblas_sgemm", limit, "GFLOP/s", 1.0);
    bench::print_row("torch eager W3 step", 1e6 * t, "us", limit > 0 ? gflop / t / limit : 0, gflop / t, "GFLOP/s");
  }
}
