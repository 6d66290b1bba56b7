// W7: collectives. An all-reduce (sum) of 64 MiB of f32 over 2 replicas in one process, as a
// step of its own (all_reduce, barrier, wait), against this run's limit: adding two 64 MiB
// buffers into a third with 2 TBB threads. Under mpirun -np 2 (one replica per process), the
// same all-reduce against Open MPI's MPI_Allreduce of the same buffer. Then W4 data parallel:
// the MNIST CNN's training step with 2 replicas on 64 examples each against 1 replica on 128,
// both on 2 threads.
//
//   bench_w7 [--quick]
//   mpirun --allow-run-as-root --oversubscribe -np 2 bench_w7 [--quick]
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/parallel_for.h>

#include <lazytensor/distributed.hpp>
#include <lazytensor/nn.hpp>
#include <lazytensor/optim.hpp>
#ifdef LAZYTENSOR_HAS_MPI
#include <mpi.h>
#endif

#include "mnist_net.hpp"

#include "common/timing.hpp"

namespace {

constexpr std::int64_t elements = std::int64_t{16} << 20;  // 64 MiB of f32

bool prints = false;  // this process runs the master replica

int launcher_processes() {
  const char* v = std::getenv("OMPI_COMM_WORLD_SIZE");
  return v != nullptr ? std::atoi(v) : 1;
}

/// Median seconds of one all-reduce step on replica 0 of `replicas` (the replicas run in step).
double all_reduce_seconds(int replicas, int reps, double* mpi_seconds = nullptr) {
  double seconds = 0;
  lt::launch([&](int ordinal) {
    lt::Tensor x = lt::full({elements}, 1.0 + ordinal, lt::device());
    lt::sync();
    lt::wait_device_ops();
    auto step = [&] {
      lt::Tensor y = lt::all_reduce(lt::ReduceOp::sum, x);
      lt::sync();
      lt::wait_device_ops();
      bench::keep(y);
    };
    double t = bench::median_seconds(step, reps, 3);
    if (ordinal == 0) {
      seconds = t;
      prints = true;
    }
#ifdef LAZYTENSOR_HAS_MPI
    if (mpi_seconds != nullptr) {
      std::vector<float> in(static_cast<std::size_t>(elements), 1.0f + static_cast<float>(ordinal)), out(in.size());
      double m = bench::median_seconds([&] {
        MPI_Allreduce(in.data(), out.data(), static_cast<int>(elements), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
      }, reps, 3);
      if (ordinal == 0) *mpi_seconds = m;
    }
#else
    (void)mpi_seconds;
#endif
  }, {.replicas = replicas});
  return seconds;
}

/// The add limit: c = a + b over 64 MiB with 2 threads, c written in place each time.
double add_limit_seconds(int reps) {
  std::vector<float> a(static_cast<std::size_t>(elements), 1.0f), b(a.size(), 2.0f), c(a.size());
  return bench::with_threads(2, [&] {
    return bench::median_seconds([&] {
      tbb::parallel_for(tbb::blocked_range<std::size_t>(0, a.size(), std::size_t{1} << 16), [&](const auto& r) {
        for (std::size_t i = r.begin(); i < r.end(); ++i) c[i] = a[i] + b[i];
      });
      bench::keep(c);
    }, reps, 3);
  });
}

/// Median ms of one data-parallel W4 step on replica 0 of `replicas`, global batch 128.
double w4_step_ms(int replicas, int reps) {
  double seconds = 0;
  lt::launch([&](int ordinal) {
    lt::manual_seed(0);
    const lt::Device dev = lt::device();
    MnistNet model;
    model.to(dev);
    lt::optim::SGD opt(model.parameters(), {.lr = 0.01, .momentum = 0.5});
    const std::int64_t share = 128 / replicas;
    lt::Tensor x = lt::randn({share, 1, 28, 28}).to(dev);
    lt::Tensor target = lt::randint(10, {share}).to(dev);
    auto step = [&] {
      opt.zero_grad();
      lt::Tensor loss = lt::nn::functional::nll_loss(model.forward(x), target);
      loss.backward();
      lt::optimizer_step(opt);
      lt::sync();
      lt::wait_device_ops();
      bench::keep(loss);
    };
    double t = bench::median_seconds(step, reps, 2);
    if (ordinal == 0) seconds = t;
  }, {.replicas = replicas});
  return 1e3 * seconds;
}

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  const int reps = quick ? 5 : 21;
  const int processes = launcher_processes();
  if (processes > 1) {
    double mpi = 0;
    const double ours = all_reduce_seconds(1, reps, &mpi);
    if (prints) {
      std::printf("W7, all-reduce of 64 MiB f32 over %d processes (median of %d)\n", processes, reps);
      bench::print_row("lazytensor all_reduce", 1e3 * ours, "ms", ours / mpi, 64.0 / 1024 / ours, "GiB/s");
      bench::print_row("MPI_Allreduce (limit)", 1e3 * mpi, "ms", 1.0, 64.0 / 1024 / mpi, "GiB/s");
    }
    return 0;
  }
  const double limit = add_limit_seconds(reps);
  const double ours = all_reduce_seconds(2, reps);
  std::printf("W7, all-reduce of 64 MiB f32 over 2 replicas in one process (median of %d)\n", reps);
  bench::print_row("lazytensor all_reduce", 1e3 * ours, "ms", ours / limit, 64.0 / 1024 / ours, "GiB/s");
  bench::print_row("add limit, 2 threads", 1e3 * limit, "ms", 1.0, 64.0 / 1024 / limit, "GiB/s");
  const double one = w4_step_ms(1, reps), two = w4_step_ms(2, reps);
  std::printf("W4 data parallel, global batch 128 on 2 threads (median of %d)\n", reps);
  bench::print_row("2 replicas x 64", two, "ms", two / one);
  bench::print_row("1 replica x 128 (limit)", one, "ms", 1.0);
}
