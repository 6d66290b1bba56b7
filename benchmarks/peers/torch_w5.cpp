// W5 with LibTorch eager: x is 8 floats; one step is 100 chained elementwise ops
// (x = x * 1.0001; x = x + 0.0001, 50 times) and a read of x. ns per op.
//
//   bench_torch_w5 [--quick]
#include <cstdio>
#include <cstring>

#include <torch/torch.h>

#include "common/timing.hpp"

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  const int steps = quick ? 200 : 2000, reps = quick ? 5 : 15;
  torch::NoGradGuard no_grad;
  torch::Tensor x = torch::ones({8});
  float sink = 0;
  auto many_steps = [&] {
    for (int s = 0; s < steps; ++s) {
      for (int k = 0; k < 50; ++k) {
        x = x * 1.0001;
        x = x + 0.0001;
      }
      sink += x.data_ptr<float>()[0];
    }
  };
  std::printf("W5 LibTorch %s eager: x f32[8], 100 chained ops per step and a read (median of %d runs of %d steps)\n",
              TORCH_VERSION, reps, steps);
  for (int threads : {2, 1}) {
    at::set_num_threads(threads);
    double t = bench::median_seconds(many_steps, reps) / steps;
    std::printf(" %d thread%s\n", threads, threads > 1 ? "s" : "");
    bench::print_row("torch eager, ns per op", 1e9 * t / 100, "ns", 1.0, 1e6 * t, "us/step");
  }
  std::printf("x[0] = %.6f\n", static_cast<double>(sink));
}
