// The products of W3 and W4, shape by shape: lazytensor's product kernels (the tiles and
// library the ops run) against one plain cblas_sgemm of the same shape and layout, on 1 and 2
// threads, timed in turns. W3's linear layers are x w^T on [64, k] batches; W4's convolution
// products are per image (128 of them): the forward [og, patch] x columns [patch, pixels], the
// input gradient weight^T x the output's gradient, the weight gradient the output's gradient x
// columns^T over a chunk of images; fc1 and its two gradients on batch 128.
//
//   bench_products [--quick|--full [name]]   (name: run only the shapes whose name holds it)
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <random>
#include <vector>

#include <lazytensor/ops/kernels/gemm_tiles.hpp>

#include "common/limits.hpp"
#include "common/timing.hpp"

namespace {

/// One shape class: `batches` products C[n, m] = A[n, k] B[k, m], A and B with the strides of
/// the op's operands (row-major; "t": stored transposed), A shared by the batches when
/// `shared_a` (a convolution's weight).
struct Shape {
  const char* name;
  std::int64_t batches, n, k, m;
  bool a_t, b_t, shared_a;
};

constexpr Shape shapes[] = {
    {"W3 L1 x w1^T", 1, 64, 784, 1024, false, true, false},
    {"W3 L2 x w2^T", 1, 64, 1024, 1024, false, true, false},
    {"W3 L3 x w3^T", 1, 64, 1024, 10, false, true, false},
    {"W4 conv1 fwd", 128, 10, 25, 576, false, false, true},
    {"W4 conv1 dX", 128, 25, 10, 576, true, false, true},
    {"W4 conv1 dW", 32, 10, 2304, 25, false, true, false},
    {"W4 conv2 fwd", 128, 20, 250, 64, false, false, true},
    {"W4 conv2 dX", 128, 250, 20, 64, true, false, true},
    {"W4 conv2 dW", 32, 20, 256, 250, false, true, false},
    {"W4 fc1 fwd", 1, 128, 320, 50, false, true, false},
    {"W4 fc1 dX", 1, 128, 50, 320, false, false, false},
    {"W4 fc1 dW", 1, 50, 128, 320, true, false, false},
};

struct Operands {
  std::vector<float> a, b, c;
  explicit Operands(const Shape& s) {
    std::mt19937 gen(1);
    std::uniform_real_distribution<float> u(-1, 1);
    a.resize(static_cast<std::size_t>((s.shared_a ? 1 : s.batches) * s.n * s.k));
    b.resize(static_cast<std::size_t>(s.batches * s.k * s.m));
    c.resize(static_cast<std::size_t>(s.batches * s.n * s.m));
    for (float& v : a) v = u(gen);
    for (float& v : b) v = u(gen);
  }
};

lt::kernels::GemmArgs<float> args(const Shape& s, Operands& o, std::int64_t bi) {
  const float* a = o.a.data() + (s.shared_a ? 0 : bi * s.n * s.k);
  const float* b = o.b.data() + bi * s.k * s.m;
  return {a,          s.a_t ? 1 : s.k, s.a_t ? s.n : 1, b, s.b_t ? 1 : s.m, s.b_t ? s.k : 1,
          o.c.data() + bi * s.n * s.m, s.m, s.n, s.k, s.m};
}

void lazytensor_products(const Shape& s, Operands& o) {
  lt::kernels::parallel_gemm<float>(s.batches, s.n, s.k, s.m, [&](std::int64_t bi) { return args(s, o, bi); });
}

#ifdef LAZYTENSOR_BENCH_HAVE_CBLAS
/// The batches as plain cblas_sgemm calls, one after another, on OpenBLAS's threads.
void cblas_products(const Shape& s, Operands& o) {
  for (std::int64_t bi = 0; bi < s.batches; ++bi) {
    const lt::kernels::GemmArgs<float> g = args(s, o, bi);
    cblas_sgemm(CblasRowMajor, s.a_t ? CblasTrans : CblasNoTrans, s.b_t ? CblasTrans : CblasNoTrans,
                static_cast<int>(s.n), static_cast<int>(s.m), static_cast<int>(s.k), 1.0f, g.a,
                static_cast<int>(s.a_t ? s.n : s.k), g.b, static_cast<int>(s.b_t ? s.k : s.m), 0.0f, g.c,
                static_cast<int>(s.m));
  }
}
#endif

/// Medians of f and g run in turns on this thread alone, in seconds of this thread's CPU time:
/// on a shared machine, time spent descheduled is not the kernel's.
template <class F, class G>
std::pair<double, double> cpu_seconds_paired(F&& f, G&& g, int reps) {
  auto cpu_now = [] {
    timespec t{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
  };
  f();
  g();
  std::vector<double> tf, tg;
  for (int r = 0; r < reps; ++r) {
    const double t0 = cpu_now();
    f();
    const double t1 = cpu_now();
    g();
    tf.push_back(t1 - t0), tg.push_back(cpu_now() - t1);
  }
  std::sort(tf.begin(), tf.end());
  std::sort(tg.begin(), tg.end());
  return {tf[tf.size() / 2], tg[tg.size() / 2]};
}

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  const char* only = argc > 2 ? argv[2] : nullptr;  // a substring of the shapes' names
  const int reps = quick ? 11 : 41;
  std::printf("Products of W3 and W4: lazytensor's product kernels vs plain cblas_sgemm calls of the same shapes "
              "(medians of %d, in turns; GFLOP/s; 1 thread: per second of the thread's CPU time, 2 threads: wall)\n",
              reps);
  std::printf("  GEMM backend: %s\n", lt::metrics::info("GemmBackend").c_str());
  std::printf("  %-14s %5s %5s %5s %5s   %9s %9s   %9s %9s\n", "product", "batch", "n", "k", "m", "lt 1t", "blas 1t",
              "lt 2t", "blas 2t");
  for (const Shape& s : shapes) {
    if (only != nullptr && std::strstr(s.name, only) == nullptr) continue;
    Operands o(s);
    const double gflop = 2e-9 * static_cast<double>(s.batches * s.n * s.k * s.m);
    double lt_t[2] = {0, 0}, blas_t[2] = {0, 0};
    for (int threads : {1, 2}) {
      bench::with_threads(threads, [&] {
#ifdef LAZYTENSOR_BENCH_HAVE_CBLAS
        auto lt_run = [&] { lazytensor_products(s, o); };
        auto blas_run = [&] {
          if (bench::cblas_threads_settable()) openblas_set_num_threads(threads);
          cblas_products(s, o);
        };
        auto [lt_s, blas_s] = threads == 1 ? cpu_seconds_paired(lt_run, blas_run, reps)
                                           : bench::median_seconds_paired(lt_run, blas_run, reps);
        lt_t[threads - 1] = lt_s, blas_t[threads - 1] = blas_s;
#else
        lt_t[threads - 1] = threads == 1 ? cpu_seconds_paired([&] { lazytensor_products(s, o); }, [] {}, reps).first
                                         : bench::median_seconds([&] { lazytensor_products(s, o); }, reps);
#endif
        return 0;
      });
    }
    auto rate = [&](double t) { return t > 0 ? gflop / t : 0.0; };
    std::printf("  %-14s %5lld %5lld %5lld %5lld   %9.1f %9.1f   %9.1f %9.1f\n", s.name, static_cast<long long>(s.batches),
                static_cast<long long>(s.n), static_cast<long long>(s.k), static_cast<long long>(s.m), rate(lt_t[0]),
                rate(blas_t[0]), rate(lt_t[1]), rate(blas_t[1]));
  }
}
