// W4: one training step of the MNIST CNN, batch 128: x [128, 1, 28, 28] ~ N(0, 1) and fixed
// random targets; conv1 1->10 k5, max_pool 2, relu, BatchNorm2d, conv2 10->20 k5, max_pool 2,
// relu, BatchNorm2d, flatten 320, fc1 320->50, relu, fc2 50->10, log_softmax, NLL loss; SGD lr
// 0.01 momentum 0.5. One step = zero_grad, forward, loss, backward, optimizer step, barrier and
// wait. bench_torch_w4 is its LibTorch peer. Then the same 2-thread step beside a second
// process that spins on one core (not pinned): a busy machine, whose fair share of the cores is
// half, should cost at most 2.5x the quiet time.
//
//   bench_w4 [--quick]
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>

#include <lazytensor/nn.hpp>
#include <lazytensor/optim.hpp>

#include "mnist_net.hpp"

#include "common/timing.hpp"

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  const int reps = quick ? 5 : 31;
  lt::manual_seed(0);
  auto dev = lt::device();
  MnistNet model;
  model.to(dev);
  lt::optim::SGD opt(model.parameters(), {.lr = 0.01, .momentum = 0.5});
  lt::Tensor x = lt::randn({128, 1, 28, 28}).to(dev);
  lt::Tensor target = lt::randint(10, {128}).to(dev);
  auto step = [&] {
    opt.zero_grad();
    lt::Tensor loss = lt::nn::functional::nll_loss(model.forward(x), target);
    loss.backward();
    opt.step();
    lt::sync();
    lt::wait_device_ops();
    bench::keep(loss);
  };
  step();  // the first two steps compile (the momentum buffers start in the first)
  std::printf("W4, MNIST CNN training step, batch 128 (median of %d steps after warm-up)\n", reps);
  std::printf("  GEMM backend: %s\n", lt::metrics::info("GemmBackend").c_str());
  double quiet = 0;
  for (int threads : {2, 1}) {
    double t = bench::with_threads(threads, [&] { return bench::median_seconds(step, reps, 2); });
    std::printf("  %d thread%s: %.2f ms per step\n", threads, threads > 1 ? "s" : "", 1e3 * t);
    if (threads == 2) quiet = t;
  }
  const pid_t spinner = fork();
  if (spinner == 0) {
    for (volatile unsigned long spin = 0;; spin = spin + 1) {
    }
  }
  if (spinner > 0) {
    const double busy = bench::with_threads(2, [&] { return bench::median_seconds(step, reps, 2); });
    kill(spinner, SIGKILL);
    waitpid(spinner, nullptr, 0);
    std::printf("  2 threads beside a spinning process: %.2f ms per step, %.2fx the quiet step (limit 2.5x)\n",
                1e3 * busy, busy / quiet);
  }
  std::printf("  graphs compiled: %lld, cached: %lld\n", static_cast<long long>(lt::metrics::counter("UncachedCompile")),
              static_cast<long long>(lt::metrics::counter("CachedCompile")));
}
