// W1: out = max(a*b + c, 0) * 0.5 - b over N = 2^24 floats; one evaluation = trace + barrier +
// wait. Written op by op (the fusing scheduler makes one group of it) and as one expression
// (one fragment), beside hand-written Eigen, xtensor (where the benchmark was built with it)
// and the STREAM triad measured in the same run. Then the op-by-op form on bf16 inputs with a
// bf16 result (each op in f32, rounded once: half the bytes), timed in turns with the f32
// form, and the ratio of their medians; likewise the expression on bf16 operands.
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
  // The same values in bf16 (rounded once).
  lt::Tensor a16 = a.to(lt::bf16), b16 = b.to(lt::bf16), c16 = c.to(lt::bf16);
  lt::sync();
  auto op_by_op_bf16 = [&] {
    lt::Tensor out = w1_op_by_op(a16, b16, c16);
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
  // On bf16 operands an expression records op by op (each op rounds), so it runs as the
  // op-by-op form does: timed in turns with the f32 expression.
  auto expression_bf16 = [&] {
    lt::Tensor out = lt::maximum(a16 * b16 + c16, 0.0f) * 0.5f - b16;
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
      // bf16 moves 8 B/element; timed in turns with f32 so that both see the same load.
      auto [t_f32, t_bf16] = bench::median_seconds_paired(op_by_op, op_by_op_bf16, 9);
      bench::print_row("lazytensor, op by op, bf16", 1e3 * t_bf16, "ms", gb / 2 / t_bf16 / stream, gb / 2 / t_bf16, "GB/s");
      std::printf("  bf16 time / f32 time, op by op (in turns): %.3f (f32 %.3f ms, bf16 %.3f ms)\n", t_bf16 / t_f32,
                  1e3 * t_f32, 1e3 * t_bf16);
      auto [t_expr_f32, t_expr_bf16] = bench::median_seconds_paired(expression, expression_bf16, 9);
      bench::print_row("lazytensor, expression, bf16", 1e3 * t_expr_bf16, "ms", gb / 2 / t_expr_bf16 / stream, gb / 2 / t_expr_bf16, "GB/s");
      std::printf("  bf16 time / f32 time, expression (in turns): %.3f (f32 %.3f ms, bf16 %.3f ms)\n",
                  t_expr_bf16 / t_expr_f32, 1e3 * t_expr_f32, 1e3 * t_expr_bf16);
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
  lt::PlanStats stats16 = lt::debug::plan_stats({w1_op_by_op(a16, b16, c16)});
  std::printf("plan of the op-by-op form in bf16: %d kernel(s), %lld intermediate bytes\n", stats16.kernels,
              static_cast<long long>(stats16.intermediate_bytes));
}
