// GPT: one training step of examples/gpt.cpp's byte-level GPT with its defaults (4 pre-norm
// blocks, d_model 256, 4 heads, context 128, dropout 0.1, batch 16) on the lazy device: zero_grad,
// forward, cross entropy, backward, clip_grad_norm_ to 1, AdamW (decay on matrices only), the
// linear warm-up schedule, barrier and wait. The model is the example's (gpt_model.hpp); the
// batch is random bytes (common/gpt_workload.hpp), the same in bench_torch_gpt, its LibTorch
// peer, which prints the same GFLOP and parameter count.
//
//   bench_gpt [--quick]
#include <cmath>
#include <cstdio>
#include <cstring>

#include <lazytensor/lazytensor.hpp>
#include <lazytensor/nn.hpp>
#include <lazytensor/optim.hpp>

#include "gpt_model.hpp"

#include "common/gpt_workload.hpp"
#include "common/fma_peak.hpp"
#include "common/timing.hpp"

namespace g = bench::gpt;

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  const int reps = quick ? 3 : 11;
  const GptConfig config;
  if (config.vocab != g::vocab || config.context != g::context || config.d_model != g::d_model ||
      config.heads != g::heads || config.layers != g::layers || config.dropout != g::dropout) {
    std::fprintf(stderr, "bench_gpt: GptConfig's defaults differ from common/gpt_workload.hpp's\n");
    return 1;
  }
  lt::manual_seed(0);
  const lt::Device dev = lt::device();
  Gpt model(config);
  model.to(dev);
  std::int64_t count = 0;
  for (const lt::Tensor& p : model.parameters()) count += p.numel();
  if (count != g::parameters()) {
    std::fprintf(stderr, "bench_gpt: %lld parameters, the workload counts %lld\n", static_cast<long long>(count),
                 static_cast<long long>(g::parameters()));
    return 1;
  }
  lt::optim::AdamW optimizer(model.param_groups(g::weight_decay), lt::optim::AdamOptions{.lr = g::lr, .beta2 = g::beta2});
  auto schedule = lt::optim::get_linear_schedule_with_warmup(optimizer, g::warmup, g::total_steps);
  schedule.step();  // as the example: step 0's rate is 0
  const g::Tokens tokens = g::tokens(1);
  lt::Tensor x = lt::from_vector(tokens.x, {g::batch, g::context}).to(dev);
  lt::Tensor y = lt::from_vector(tokens.y, {g::batch, g::context}).to(dev);
  lt::sync();
  auto step = [&] {
    lt::Tensor loss = gpt_train_step(model, optimizer, schedule, x, y, g::clip);
    lt::sync();
    lt::wait_device_ops();
    bench::keep(loss);
    return loss;
  };
  const double first = step().item<float>();
  std::printf("GPT training step, lazytensor: %lld layers, d_model %lld, %lld heads, context %lld, batch %lld, "
              "%lld parameters, %.2f GFLOP of products per step (median of %d steps after warm-up)\n",
              static_cast<long long>(g::layers), static_cast<long long>(g::d_model), static_cast<long long>(g::heads),
              static_cast<long long>(g::context), static_cast<long long>(g::batch), static_cast<long long>(count),
              g::gflop(), reps);
  std::printf("  first step's loss %.4f (ln %lld = %.4f)\n", first, static_cast<long long>(g::vocab),
              std::log(static_cast<double>(g::vocab)));
  if (!g::plausible_first_loss(first)) {
    std::fprintf(stderr, "bench_gpt: the first step's loss is not near ln(vocab)\n");
    return 1;
  }
  std::printf("  GEMM backend: %s\n", lt::metrics::info("GemmBackend").c_str());
  step();  // AdamW's moments exist from the second step on: its graph is the steady one
  const long long compiled = lt::metrics::counter("UncachedCompile");
  for (int threads : {2, 1}) {
    double t = bench::with_threads(threads, [&] { return bench::median_seconds(step, reps, 2); });
    const double peak = bench::fma_peak_gflops(threads);
    std::printf("  %d thread%s: %.1f ms per step, %.1f GFLOP/s; its products alone at the FMA peak (%.0f GFLOP/s): %.1f ms\n",
                threads, threads > 1 ? "s" : "", 1e3 * t, g::gflop() / t, peak, 1e3 * g::gflop() / peak);
  }
  const double cpu = bench::with_threads(1, [&] { return bench::median_process_cpu_seconds(step, reps); });
  std::printf("  1 thread, CPU time: %.1f ms per step\n", 1e3 * cpu);
  std::printf("  graphs compiled: %lld (%lld while timed), cached: %lld\n",
              static_cast<long long>(lt::metrics::counter("UncachedCompile")),
              static_cast<long long>(lt::metrics::counter("UncachedCompile")) - compiled,
              static_cast<long long>(lt::metrics::counter("CachedCompile")));
}
