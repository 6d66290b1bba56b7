// W7: collectives. An all-reduce (sum) of 64 MiB of f32 over 2 replicas in one process, as a
// step of its own (all_reduce, barrier, wait), against this run's limit: adding two 64 MiB
// buffers into a third with 2 TBB threads. Under mpirun -np 2 (one replica per process), the
// same all-reduce against Open MPI's MPI_Allreduce of the same buffer. Then W4 data parallel:
// the MNIST CNN's training step with 2 replicas on 64 examples each against 1 replica on 128,
// both on 2 threads.
//
//   bench_w7 [--quick]
//   mpirun --allow-run-as-root --oversubscribe -np 2 bench_w7 [--quick]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/task_arena.h>

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

/// The add limit's body: c = a + b with the threads of the calling arena.
void add_into(const std::vector<float>& a, const std::vector<float>& b, std::vector<float>& c) {
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, a.size(), std::size_t{1} << 16), [&](const auto& r) {
    for (std::size_t i = r.begin(); i < r.end(); ++i) c[i] = a[i] + b[i];
  });
  bench::keep(c);
}

double median(std::vector<double> v) {
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

/// Medians of one all-reduce step (on replica 0 of `replicas`; the replicas run in step) and of
/// the limit, timed in turns so that both see the same moments of a noisy machine: with one
/// process the add limit on 2 threads (run by replica 0 while the others wait), across
/// processes MPI_Allreduce of the same buffer.
std::pair<double, double> all_reduce_and_limit(int replicas, int reps, bool mpi_limit) {
  std::vector<double> ours, limit;
  lt::launch([&](int ordinal) {
    lt::Tensor x = lt::full({elements}, 1.0 + ordinal, lt::device());
    lt::sync();
    lt::wait_device_ops();
    std::vector<float> a(static_cast<std::size_t>(elements), 1.0f + static_cast<float>(ordinal)), b(a.size(), 2.0f), c(a.size());
    tbb::task_arena two(2);
    for (int r = -3; r < reps; ++r) {  // 3 warm-up rounds
      lt::rendezvous("limit");
      auto t0 = std::chrono::steady_clock::now();
      if (mpi_limit) {
#ifdef LAZYTENSOR_HAS_MPI
        MPI_Allreduce(a.data(), c.data(), static_cast<int>(elements), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
#endif
      } else if (ordinal == 0) {
        two.execute([&] { add_into(a, b, c); });
      }
      auto t1 = std::chrono::steady_clock::now();
      lt::rendezvous("all_reduce");
      auto t2 = std::chrono::steady_clock::now();
      lt::Tensor y = lt::all_reduce(lt::ReduceOp::sum, x);
      lt::sync();
      lt::wait_device_ops();
      bench::keep(y);
      auto t3 = std::chrono::steady_clock::now();
      if (ordinal == 0 && r >= 0) {
        limit.push_back(std::chrono::duration<double>(t1 - t0).count());
        ours.push_back(std::chrono::duration<double>(t3 - t2).count());
        prints = true;
      }
    }
  }, {.replicas = replicas});
  if (ours.empty()) return {0, 0};
  return {median(ours), median(limit)};
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
    auto [ours, mpi] = all_reduce_and_limit(1, reps, true);
    if (prints) {
      std::printf("W7, all-reduce of 64 MiB f32 over %d processes (median of %d, in turns)\n", processes, reps);
      bench::print_row("lazytensor all_reduce", 1e3 * ours, "ms", ours / mpi, 64.0 / 1024 / ours, "GiB/s");
      bench::print_row("MPI_Allreduce (limit)", 1e3 * mpi, "ms", 1.0, 64.0 / 1024 / mpi, "GiB/s");
    }
    return 0;
  }
  auto [ours, limit] = all_reduce_and_limit(2, reps, false);
  std::printf("W7, all-reduce of 64 MiB f32 over 2 replicas in one process (median of %d, in turns)\n", reps);
  bench::print_row("lazytensor all_reduce", 1e3 * ours, "ms", ours / limit, 64.0 / 1024 / ours, "GiB/s");
  bench::print_row("add limit, 2 threads", 1e3 * limit, "ms", 1.0, 64.0 / 1024 / limit, "GiB/s");
  // Rounds in turns: each round's median of 1 replica x 128, then of 2 replicas x 64.
  const int rounds = quick ? 3 : 7, steps = quick ? 3 : 7;
  std::vector<double> one, two;
  for (int k = 0; k < rounds; ++k) {
    one.push_back(w4_step_ms(1, steps));
    two.push_back(w4_step_ms(2, steps));
  }
  const double one_ms = median(one), two_ms = median(two);
  std::printf("W4 data parallel, global batch 128 on 2 threads (median of %d rounds of %d steps, in turns)\n", rounds, steps);
  bench::print_row("2 replicas x 64", two_ms, "ms", two_ms / one_ms);
  bench::print_row("1 replica x 128 (limit)", one_ms, "ms", 1.0);
}
