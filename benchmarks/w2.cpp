// W2: softmax of x [4096, 1024] along dim 1, written as the 5 ops
//   m = amax(x, 1, keepdim); e = exp(x - m); s = sum(e, 1, keepdim); y = e / s
// one evaluation = trace + barrier + wait. The fusing scheduler makes one row group of it: one
// pass over memory, no intermediate array. Measured beside a softmax fused by hand with Eigen
// (the target: at most 1.1x its time) and the STREAM triad, in the same run.
//
//   bench_w2 [--quick]
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#include <lazytensor/lazytensor.hpp>

#include "common/eigen_softmax.hpp"
#include "common/stream.hpp"
#include "common/timing.hpp"

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  const std::int64_t rows = quick ? 512 : 4096, cols = 1024;
  const int reps = quick ? 5 : 21;
  const double gb = 8.0 * static_cast<double>(rows * cols) / 1e9;  // read x once, write y once
  lt::manual_seed(0);
  lt::Tensor x = lt::randn({rows, cols}, lt::device());
  lt::sync();
  // As a function of x: m, e and s are gone by the barrier. (A tensor still held there is a
  // result and is written out in full, as PyTorch/XLA materialises every live tensor.)
  auto softmax_5_ops = [](const lt::Tensor& in) {
    lt::Tensor m = lt::amax(in, 1, true), e = lt::exp(in - m), s = lt::sum(e, 1, true);
    return e / s;
  };
  auto five_ops = [&] {
    lt::Tensor y = softmax_5_ops(x);
    lt::sync();
    lt::wait_device_ops();
    bench::keep(y);
  };
  auto library_softmax = [&] {
    lt::Tensor y = lt::softmax(x, 1);
    lt::sync();
    lt::wait_device_ops();
    bench::keep(y);
  };
  std::vector<float> vx = x.to_vector<float>(), hand(vx.size());
  auto eigen = [&] { bench::eigen_softmax_rows(vx.data(), hand.data(), rows, cols); };

  std::printf("W2 softmax, x [%lld, %lld] (median of %d; ratio: time / hand-fused Eigen's; GB/s at 8 B/element)\n",
              static_cast<long long>(rows), static_cast<long long>(cols), reps);
  for (int threads : {2, 1}) {
    bench::with_threads(threads, [&] {
      double stream = bench::stream_triad_gbs();
      // Each form alternates with the hand-fused rows: both then start with the other's data
      // in the caches, never their own (timed back to back, a form would find its input there).
      auto [t_ops, t_eigen] = bench::median_seconds_paired(five_ops, eigen, reps);
      auto [t_fn, t_eigen_fn] = bench::median_seconds_paired(library_softmax, eigen, reps);
      std::printf(" %d thread%s, STREAM triad %.2f GB/s\n", threads, threads > 1 ? "s" : "", stream);
      bench::print_row("lazytensor, 5 ops", 1e3 * t_ops, "ms", t_ops / t_eigen, gb / t_ops, "GB/s");
      bench::print_row("lazytensor, lt::softmax", 1e3 * t_fn, "ms", t_fn / t_eigen_fn, gb / t_fn, "GB/s");
      bench::print_row("hand-fused Eigen rows", 1e3 * t_eigen, "ms", 1.0, gb / t_eigen, "GB/s");
    });
  }
  lt::Tensor y = softmax_5_ops(x);
  lt::PlanStats stats = lt::debug::plan_stats({y});
  std::printf("plan of the 5 ops: %d kernel(s), %d row group(s), %lld intermediate bytes\n", stats.kernels,
              stats.row_groups, static_cast<long long>(stats.intermediate_bytes));
  // The same values as the hand-fused rows, up to rounding.
  lt::sync();
  std::vector<float> vy = y.to_vector<float>();
  eigen();
  double worst = 0;
  for (std::size_t i = 0; i < vy.size(); ++i) worst = std::max(worst, std::abs(static_cast<double>(vy[i]) - hand[i]));
  std::printf("largest difference from the hand-fused result: %.3g\n", worst);
}
