// W1 with LibTorch eager: out = max(a*b + c, 0) * 0.5 - b over N = 2^24 floats in [-1, 1),
// at 2 and 1 threads, beside the STREAM triad of the same run. Two forms: the plain
// expression (every op allocates its result, as a user writes it) and the same 5 ops into
// preallocated outputs, which separates the allocation cost from the 5 unfused passes.
//
//   bench_torch_w1 [--quick]
#include <cstdint>
#include <cstdio>
#include <cstring>

#include <torch/torch.h>

#include "common/stream.hpp"
#include "common/timing.hpp"

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  const std::int64_t n = quick ? (1 << 20) : (1 << 24);
  const int reps = quick ? 5 : 9;
  const double gb = 16.0 * static_cast<double>(n) / 1e9;
  torch::NoGradGuard no_grad;
  torch::manual_seed(0);
  torch::Tensor a = torch::rand({n}) * 2 - 1, b = torch::rand({n}) * 2 - 1, c = torch::rand({n}) * 2 - 1;

  auto expression = [&] {
    torch::Tensor out = torch::clamp_min(a * b + c, 0) * 0.5 - b;
    bench::keep(out);
  };
  torch::Tensor t1 = torch::empty({n}), t2 = torch::empty({n}), out = torch::empty({n});
  auto preallocated = [&] {
    at::mul_out(t1, a, b);
    at::add_out(t2, t1, c);
    at::clamp_min_out(t1, t2, 0);
    at::mul_out(t2, t1, 0.5);
    at::sub_out(out, t2, b);
    bench::keep(out);
  };

  std::printf("W1 LibTorch %s eager, N = %lld (median of %d; GB/s at 16 B/element; ratio: GB/s / STREAM)\n",
              TORCH_VERSION, static_cast<long long>(n), reps);
  for (int threads : {2, 1}) {
    double stream = bench::stream_gbs(threads, quick ? 5 : 11);
    at::set_num_threads(threads);
    double t_expr = bench::median_seconds(expression, reps), t_pre = bench::median_seconds(preallocated, reps);
    std::printf(" %d thread%s (at::get_num_threads() = %d), STREAM triad %.2f GB/s\n", threads,
                threads > 1 ? "s" : "", at::get_num_threads(), stream);
    bench::print_row("torch eager", 1e3 * t_expr, "ms", gb / t_expr / stream, gb / t_expr, "GB/s");
    bench::print_row("torch, preallocated outs", 1e3 * t_pre, "ms", gb / t_pre / stream, gb / t_pre, "GB/s");
  }
}
