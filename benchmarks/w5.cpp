// W5: the cost of a small step end to end. x is 8 floats; one step is 100 chained elementwise
// ops (x = x * 1.0001f; x = x + 0.0001f, 50 times), then the barrier and a read of x. Reported
// as ns per op at steady state (the plan comes from the cache), split into tracing the 100 ops
// and the barrier with its wait and read; the compiles after the first step are counted.
//
//   bench_w5 [--quick]
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#include <lazytensor/lazytensor.hpp>

#include "common/timing.hpp"

namespace {

constexpr int ops_per_step = 100;

lt::Tensor trace_chain(lt::Tensor x) {
  for (int k = 0; k < ops_per_step / 2; ++k) {
    x = x * 1.0001f;
    x = x + 0.0001f;
  }
  return x;
}

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  const int steps = quick ? 200 : 2000, reps = quick ? 5 : 15;
  auto dev = lt::device();
  lt::Tensor x = lt::full({8}, 1.0f, dev);
  lt::sync();
  float sink = 0;
  auto step = [&] {
    x = trace_chain(x);
    lt::sync();
    sink += x.to_vector<float>()[0];
  };
  step();  // the one compile
  const std::int64_t compiles = lt::metrics::counter("UncachedCompile");
  auto many_steps = [&] {
    for (int s = 0; s < steps; ++s) step();
  };
  auto many_traces = [&] {
    for (int s = 0; s < steps; ++s) bench::keep(trace_chain(x));
  };

  std::printf("W5: x f32[8], %d chained elementwise ops per step, then barrier and read (median of %d runs of %d steps)\n",
              ops_per_step, reps, steps);
  for (int threads : {2, 1}) {
    bench::with_threads(threads, [&] {
      double t_step = bench::median_seconds(many_steps, reps) / steps;
      double t_trace = bench::median_seconds(many_traces, reps) / steps;
      std::printf(" %d thread%s\n", threads, threads > 1 ? "s" : "");
      bench::print_row("step, ns per op", 1e9 * t_step / ops_per_step, "ns", 1.0, 1e6 * t_step, "us/step");
      bench::print_row("  tracing, ns per op", 1e9 * t_trace / ops_per_step, "ns", t_trace / t_step);
      bench::print_row("  barrier + read", 1e9 * (t_step - t_trace) / ops_per_step, "ns/op", (t_step - t_trace) / t_step,
                       1e6 * (t_step - t_trace), "us/step");
    });
  }
  lt::wait_device_ops();
  std::printf("compiles after the first step: %lld (cached steps: %lld); x[0] = %.6f\n",
              static_cast<long long>(lt::metrics::counter("UncachedCompile") - compiles),
              static_cast<long long>(lt::metrics::counter("CachedCompile")), static_cast<double>(sink));
}
