// W1: out = max(a*b + c, 0) * 0.5 - b over N = 2^24 floats; one evaluation = trace + barrier +
// wait. Written op by op (the fusing scheduler makes one group of it) and as one expression
// (one fragment), beside hand-written Eigen, xtensor (where the benchmark was built with it)
// and the STREAM triad measured in the same run.
//
//   bench_w1 [--quick]
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#include <lazytensor/lazytensor.hpp>

#include "common/eigen_w1.hpp"
#include "common/stream.hpp"
#include "common/timing.hpp"
#if defined(LAZYTENSOR_BENCH_HAVE_XTENSOR)
#include "common/xtensor_w1.hpp"
#endif

int main(int argc, char** argv) {
  bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  const std::int64_t n = quick ? (1 << 20) : (1 << 24);
  const double gb = 16.0 * static_cast<double>(n) / 1e9;
  lt::manual_seed(0);
  auto dev = lt::device();
  lt::Tensor a = lt::rand({n}, dev) * 2 - 1, b = lt::rand({n}, dev) * 2 - 1, c = lt::rand({n}, dev) * 2 - 1;
  lt::sync();
  // Op by op as a function of a, b and c: its intermediates are gone by the barrier. (A
  // tensor still held there is a result and is written out in full, as PyTorch/XLA
  // materialises every live tensor.)
  auto w1_op_by_op = [](const lt::Tensor& a, const lt::Tensor& b, const lt::Tensor& c) {
    lt::Tensor ab = a * b, s = ab + c, m = lt::maximum(s, 0.0), h = m * 0.5;
    return h - b;
  };
  auto op_by_op = [&] {
    lt::Tensor out = w1_op_by_op(a, b, c);
    lt::sync();
    lt::wait_device_ops();
    bench::keep(out);
  };
  auto expression = [&] {
    lt::Tensor out = lt::maximum(a * b + c, 0.0f) * 0.5f - b;
    lt::sync();
    lt::wait_device_ops();
    bench::keep(out);
  };
  std::vector<float> va = a.to_vector<float>(), vb = b.to_vector<float>(), vc = c.to_vector<float>(), hand(va.size());
#if defined(LAZYTENSOR_BENCH_HAVE_XTENSOR)
  bench::XtensorW1 xtensor(va, vb, vc);
#endif

  std::printf("W1, N = %lld (median of 9; GB/s at 16 B/element; ratio: GB/s / STREAM)\n", static_cast<long long>(n));
  for (int threads : {2, 1}) {
    bench::with_threads(threads, [&] {
      double stream = bench::stream_triad_gbs();
      double t_ops = bench::median_seconds(op_by_op, 9), t_expr = bench::median_seconds(expression, 9);
      double t_eigen = bench::median_seconds([&] { bench::eigen_w1(va.data(), vb.data(), vc.data(), hand.data(), n, 1 << 14); }, 9);
      std::printf(" %d thread%s, STREAM triad %.2f GB/s\n", threads, threads > 1 ? "s" : "", stream);
      bench::print_row("lazytensor, op by op", 1e3 * t_ops, "ms", gb / t_ops / stream, gb / t_ops, "GB/s");
      bench::print_row("lazytensor, expression", 1e3 * t_expr, "ms", gb / t_expr / stream, gb / t_expr, "GB/s");
      bench::print_row("hand-written Eigen", 1e3 * t_eigen, "ms", gb / t_eigen / stream, gb / t_eigen, "GB/s");
#if defined(LAZYTENSOR_BENCH_HAVE_XTENSOR)
      double t_xtensor = bench::median_seconds([&] { xtensor.run(); }, 9);
      bench::print_row("xtensor", 1e3 * t_xtensor, "ms", gb / t_xtensor / stream, gb / t_xtensor, "GB/s");
      std::printf("  xtensor's time / lazytensor's: op by op %.2f, expression %.2f\n", t_xtensor / t_ops, t_xtensor / t_expr);
#endif
    });
  }
#if defined(LAZYTENSOR_BENCH_HAVE_XTENSOR)
  float largest = 0;
  for (std::size_t i = 0; i < hand.size(); ++i) largest = std::max(largest, std::abs(xtensor.out[i] - hand[i]));
  std::printf("largest difference of xtensor's result from Eigen's: %.3g\n", static_cast<double>(largest));
#endif
  lt::PlanStats stats = lt::debug::plan_stats({w1_op_by_op(a, b, c)});
  std::printf("plan of the op-by-op form: %d kernel(s), %lld intermediate bytes\n", stats.kernels,
              static_cast<long long>(stats.intermediate_bytes));
}
