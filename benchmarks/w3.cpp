// W3: MLP inference, batch 64: log_softmax(L3(relu(L2(relu(L1(x)))))), L1 784->1024,
// L2 1024->1024, L3 1024->10, with bias, no grad, the same input every step. One step = trace +
// barrier + wait. Beside it, in the same run: the SGEMM limits (2048^3, OpenBLAS and Eigen), the
// step's three products alone, and the same three products as single cblas_sgemm calls with
// OpenBLAS's own threads (what BLAS does on these shapes). The step runs under lt::autocast(bf16)
// too, in the same turns: its products in bf16, the bf16 casts of the weights and of x made
// once and kept by autocast's cast cache, printed with its speed-up over the f32 step.
//
//   bench_w3 [--quick]
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <thread>
#include <vector>

#include <lazytensor/lazytensor.hpp>

#include "common/limits.hpp"
#include "common/timing.hpp"
#include "common/turns.hpp"

namespace {

constexpr std::int64_t batch = 64, in = 784, hidden = 1024, out = 10;
// 2 flops per multiply-add of the three products: 238.3 MFLOP.
constexpr double gflop = 2.0 * batch * (in * hidden + hidden * hidden + hidden * out) / 1e9;

struct Mlp {
  lt::Tensor w1, b1, w2, b2, w3, b3;
  explicit Mlp(lt::Device dev)
      : w1(lt::randn({hidden, in}, dev) * 0.03), b1(lt::randn({hidden}, dev) * 0.1),
        w2(lt::randn({hidden, hidden}, dev) * 0.03), b2(lt::randn({hidden}, dev) * 0.1),
        w3(lt::randn({out, hidden}, dev) * 0.03), b3(lt::randn({out}, dev) * 0.1) {}
  lt::Tensor forward(const lt::Tensor& x) const {
    lt::Tensor h1 = lt::relu(lt::linear(x, w1, b1));
    lt::Tensor h2 = lt::relu(lt::linear(h1, w2, b2));
    return lt::log_softmax(lt::linear(h2, w3, b3), 1);
  }
  lt::Tensor products_only(const lt::Tensor& x) const {
    return lt::matmul(lt::matmul(lt::matmul(x, w1.t()), w2.t()), w3.t());
  }
};

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  // Per round: 3 runs of each SGEMM limit, `steps` runs of each W3 form.
  const int rounds = quick ? 2 : 7, sgemms = 3, steps = quick ? 10 : 30;
  lt::manual_seed(0);
  auto dev = lt::device();
  Mlp mlp(dev);
  lt::Tensor x = lt::randn({batch, in}, dev);
  lt::sync();
  auto step = [&] {
    lt::Tensor y = mlp.forward(x);
    lt::sync();
    lt::wait_device_ops();
    bench::keep(y);
  };
  auto autocast_step = [&] {
    lt::autocast guard(lt::bf16);
    lt::Tensor y = mlp.forward(x);
    lt::sync();
    lt::wait_device_ops();
    bench::keep(y);
  };
  // The step's products alone in bf16, on bf16 copies of x and the weights made once: what the
  // bf16 kernels give without the casts of each autocast step.
  const lt::Tensor xb = x.to(lt::bf16), w1b = mlp.w1.to(lt::bf16), w2b = mlp.w2.to(lt::bf16), w3b = mlp.w3.to(lt::bf16);
  lt::sync();
  auto bf16_products = [&] {
    lt::Tensor y = lt::matmul(lt::matmul(lt::matmul(xb, w1b.t()), w2b.t()), w3b.t());
    lt::sync();
    lt::wait_device_ops();
    bench::keep(y);
  };
  auto products = [&] {
    lt::Tensor y = mlp.products_only(x);
    lt::sync();
    lt::wait_device_ops();
    bench::keep(y);
  };
  bench::SgemmOperands sgemm(quick ? 1024 : 2048);
  const double sgemm_gflop = sgemm.gflop();
  auto eigen_sgemm = [&] { bench::eigen_sgemm(sgemm); };

  std::printf("W3, MLP 784-1024-1024-10, batch 64, %.1f MFLOP per step (medians of %d steps, %d SGEMMs, timed "
              "in turns; ratio: GFLOP/s / the same run's SGEMM limit, OpenBLAS where found)\n",
              gflop * 1e3, rounds * steps, rounds * sgemms);
  std::printf("  GEMM backend: %s\n", lt::metrics::info("GemmBackend").c_str());
  {
    lt::Tensor y = mlp.forward(x);
    lt::PlanStats stats = lt::debug::plan_stats({y});
    std::printf("  plan of a step: %d kernel(s), %d product(s) with an epilogue, %d row group(s), %lld intermediate bytes\n",
                stats.kernels, stats.gemm_epilogues, stats.row_groups, static_cast<long long>(stats.intermediate_bytes));
    lt::sync();
    lt::wait_device_ops();
  }
  autocast_step();  // makes the casts that autocast keeps: later steps read them
  {
    lt::autocast guard(lt::bf16);
    lt::Tensor y = mlp.forward(x);
    lt::PlanStats stats = lt::debug::plan_stats({y});
    std::printf("  plan of an autocast step (casts kept): %d kernel(s), %d product(s) with an epilogue, %d row "
                "group(s), %lld intermediate bytes\n",
                stats.kernels, stats.gemm_epilogues, stats.row_groups, static_cast<long long>(stats.intermediate_bytes));
    lt::sync();
    lt::wait_device_ops();
  }
  for (int threads : {2, 1}) {
    std::vector<std::function<void()>> fs = {eigen_sgemm, step, products, autocast_step, bf16_products};
    std::vector<int> runs = {sgemms, steps, steps, steps, steps};
#ifdef LAZYTENSOR_BENCH_HAVE_CBLAS
    // The step's products as plain row-major cblas_sgemm calls, x w^T, on copies of the weights,
    // with OpenBLAS's own threads (lazytensor sets them to 1 before each of its products).
    std::vector<float> vx = x.to_vector<float>(), w1 = mlp.w1.to_vector<float>(), w2 = mlp.w2.to_vector<float>(),
                       w3 = mlp.w3.to_vector<float>(), h1(batch * hidden), h2(batch * hidden), h3(batch * out);
    auto linear = [](const std::vector<float>& a, const std::vector<float>& w, std::vector<float>& c, int k, int n) {
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<int>(batch), n, k, 1.0f, a.data(), k, w.data(),
                  k, 0.0f, c.data(), n);
    };
    auto own_threads = [threads] {
      if (bench::cblas_threads_settable()) openblas_set_num_threads(threads);
    };
    fs.push_back([&] {
      own_threads();
      bench::cblas_sgemm_square(sgemm);
    });
    fs.push_back([&] {
      own_threads();
      linear(vx, w1, h1, in, hidden);
      linear(h1, w2, h2, hidden, hidden);
      linear(h2, w3, h3, hidden, out);
      bench::keep(h3);
    });
    runs.push_back(sgemms);
    runs.push_back(steps);
#endif
    std::vector<double> t = bench::with_threads(threads, [&] { return bench::medians_in_turns(fs, runs, rounds); });
    bench::keep(sgemm.c);
    const double eigen = sgemm_gflop / t[0];
    double limit = eigen;
    std::printf(" %d thread%s\n", threads, threads > 1 ? "s" : "");
#ifdef LAZYTENSOR_BENCH_HAVE_CBLAS
    limit = sgemm_gflop / t[5];
    bench::print_row("SGEMM limit, cblas_sgemm", limit, "GFLOP/s", 1.0);
#endif
    bench::print_row("SGEMM limit, Eigen", eigen, "GFLOP/s", eigen / limit);
    bench::print_row("lazytensor W3 step", 1e6 * t[1], "us", gflop / t[1] / limit, gflop / t[1], "GFLOP/s");
    bench::print_row("lazytensor, products only", 1e6 * t[2], "us", gflop / t[2] / limit, gflop / t[2], "GFLOP/s");
    bench::print_row("lazytensor W3 step, autocast bf16", 1e6 * t[3], "us", gflop / t[3] / limit, gflop / t[3], "GFLOP/s");
    std::printf("    autocast speed-up over the f32 step: %.2fx\n", t[1] / t[3]);
    bench::print_row("lazytensor, bf16 products only", 1e6 * t[4], "us", gflop / t[4] / limit, gflop / t[4], "GFLOP/s");
    std::printf("    bf16 products' speed-up over the f32 products: %.2fx\n", t[2] / t[4]);
#ifdef LAZYTENSOR_BENCH_HAVE_CBLAS
    bench::print_row("3 cblas_sgemm calls", 1e6 * t[6], "us", gflop / t[6] / limit, gflop / t[6], "GFLOP/s");
#endif
  }
}
