// W6: TransformerEncoderLayer(d_model 256, nhead 4, dim_feedforward 1024, dropout 0, batch_first),
// relu, post-norm, eval, no grad, input [8, 128, 256]. One call = trace + barrier + wait. Beside
// it, in the same run and timed in turns: the layer's products alone as plain cblas_sgemm calls
// with OpenBLAS's own threads (the "GEMM-only bound"; ratio = its time / the layer's time).
// bench_torch_w6 is the LibTorch peer; it prints the same bound, so that runs compare. The call
// again under lt::autocast(bf16) (products in bf16, the weights' casts kept by autocast's cache),
// in the same turns, and its time over the f32 call's.
//
//   bench_w6 [--quick]
#include <cstdio>
#include <cstring>
#include <functional>
#include <vector>

#include <lazytensor/lazytensor.hpp>
#include <lazytensor/nn.hpp>

#include "common/fma_peak.hpp"
#include "common/limits.hpp"
#include "common/timing.hpp"
#include "common/turns.hpp"
#include "common/w6_products.hpp"

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  const int rounds = quick ? 2 : 7, calls = quick ? 5 : 15;
  constexpr std::int64_t n = 8, s = 128, e = 256, heads = 4, ff = 1024;
  lt::manual_seed(0);
  lt::no_grad no_grad;
  lt::nn::TransformerEncoderLayer layer(e, heads, {.dim_feedforward = ff, .dropout = 0.0, .batch_first = true});
  layer.eval();
  auto dev = lt::device();
  layer.to(dev);
  lt::Tensor x = lt::randn({n, s, e}, dev);
  lt::sync();
  auto call = [&] {
    lt::Tensor y = layer(x);
    lt::sync();
    lt::wait_device_ops();
    bench::keep(y);
  };
  auto autocast_call = [&] {
    lt::autocast guard(lt::bf16);
    call();
  };
  const double gflop = 2.0 * (n * s * e * 3.0 * e + 2.0 * n * s * s * e + n * s * e * e + 2.0 * n * s * e * ff) / 1e9;
  std::printf("W6, TransformerEncoderLayer(256, 4, 1024), eval, [8, 128, 256], %.3f GFLOP of products per call "
              "(medians of %d calls, timed in turns with the bound)\n",
              gflop, rounds * calls);
  std::printf("  GEMM backend: %s\n", lt::metrics::info("GemmBackend").c_str());
  {
    lt::Tensor y = layer(x);
    lt::PlanStats stats = lt::debug::plan_stats({y});
    std::printf("  plan of a call: %d kernel(s), %d product(s) with an epilogue, %d row group(s), %lld intermediate "
                "bytes, arena %lld bytes\n",
                stats.kernels, stats.gemm_epilogues, stats.row_groups, static_cast<long long>(stats.intermediate_bytes),
                static_cast<long long>(stats.arena_bytes));
    lt::sync();
    lt::wait_device_ops();
  }
#ifdef LAZYTENSOR_BENCH_HAVE_CBLAS
  bench::W6Products products(x.to_vector<float>(), layer.self_attn.in_proj_weight.to_vector<float>(),
                             layer.self_attn.out_proj.weight.to_vector<float>(), layer.linear1.weight.to_vector<float>(),
                             layer.linear2.weight.to_vector<float>());
#endif
  for (int threads : {2, 1}) {
    std::vector<std::function<void()>> fs = {call, autocast_call};
    std::vector<int> runs = {calls, calls};
#ifdef LAZYTENSOR_BENCH_HAVE_CBLAS
    fs.push_back([&] {
      if (bench::cblas_threads_settable()) openblas_set_num_threads(threads);
      products.run();
      bench::keep(products.out);
    });
    runs.push_back(calls);
#endif
    std::vector<double> t = bench::with_threads(threads, [&] { return bench::medians_in_turns(fs, runs, rounds); });
    std::printf(" %d thread%s\n", threads, threads > 1 ? "s" : "");
    double bound = t.size() > 2 ? t[2] : 0;
    if (bound > 0) bench::print_row("products, cblas_sgemm", 1e3 * bound, "ms", 1.0, gflop / bound, "GFLOP/s");
    bench::print_row("lazytensor W6 call", 1e3 * t[0], "ms", bound > 0 ? t[0] / bound : 0, gflop / t[0], "GFLOP/s");
    bench::print_row("  under autocast(bf16)", 1e3 * t[1], "ms", bound > 0 ? t[1] / bound : 0, gflop / t[1], "GFLOP/s");
    std::printf("  autocast time / f32 time: %.3f (target without AMX: <= 0.7)\n", t[1] / t[0]);
    const double peak = bench::fma_peak_gflops(threads);
    bench::print_row("products at the FMA peak", 1e3 * gflop / peak, "ms", bound > 0 ? gflop / peak / bound : 0, peak, "GFLOP/s");
  }
  std::printf("  (ratio: time / the products' time; target <= 1.5)\n");
  std::printf("  graphs compiled: %lld, cached: %lld\n", static_cast<long long>(lt::metrics::counter("UncachedCompile")),
              static_cast<long long>(lt::metrics::counter("CachedCompile")));
}
