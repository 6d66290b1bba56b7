// A second process for the persistent plan cache tests (persistent_cache_test.cpp).
//   cache_probe run DIR          a fixed program of three graphs, five steps each; prints its
//                                compile counters and a checksum of its results
//   cache_probe write DIR FIRST  compiles graph after graph (sizes FIRST, FIRST + 1, ...) into
//                                DIR until it is killed; prints "ready" once the cache is open
//   cache_probe verify DIR N     runs the graphs of sizes 1..N against DIR's entries and
//                                checks each result against the eager device
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <lazytensor/lazytensor.hpp>

namespace {

/// The graph of size n: a product, a row softmax and a reduction, from data made from n.
lt::Tensor sized_graph(std::int64_t n, lt::Device dev) {
  lt::Tensor x = lt::arange(0, n * 3, 1, dev).to(lt::f32).reshape({n, 3}) * 0.01f;
  lt::Tensor w = lt::full({3, 2}, 0.5f, dev);
  lt::Tensor h = lt::softmax(x.matmul(w).relu() + 1.0f, 1);
  return h.sum(0) * static_cast<float>(n);
}

double checksum(const lt::Tensor& t) {
  double s = 0;
  for (float v : t.to_vector<float>()) s += v;
  return s;
}

void print_counters() {
  std::printf("uncached=%lld cached=%lld hit=%lld miss=%lld bad=%lld",
              static_cast<long long>(lt::metrics::counter("UncachedCompile")),
              static_cast<long long>(lt::metrics::counter("CachedCompile")),
              static_cast<long long>(lt::metrics::counter("PersistentCacheHit")),
              static_cast<long long>(lt::metrics::counter("PersistentCacheMiss")),
              static_cast<long long>(lt::metrics::counter("PersistentCacheDeserializeFailure")));
}

int run(const std::string& dir) {
  lt::initialize_cache(dir);
  auto dev = lt::device();
  lt::manual_seed(3);
  lt::Tensor w = lt::randn({16, 8}, dev), v = lt::randn({8}, dev);
  lt::sync();
  double sum = 0;
  for (int step = 0; step < 5; ++step) {
    lt::Tensor x = lt::full({4, 16}, 0.1f * static_cast<float>(step + 1), dev);
    lt::Tensor y = lt::log_softmax(x.matmul(w).relu() + v, 1);
    lt::sync();
    lt::Tensor z = lt::Tensor(y * y).sum(1).exp();
    lt::sync();
    lt::Tensor r = sized_graph(step + 2 > 3 ? 3 : 2, dev);
    lt::sync();
    sum += checksum(y) + checksum(z) + checksum(r);
  }
  lt::wait_device_ops();
  print_counters();
  std::printf(" checksum=%.9g\n", sum);
  return 0;
}

int write(const std::string& dir, std::int64_t first) {
  lt::initialize_cache(dir);
  auto dev = lt::device();
  std::puts("ready");
  std::fflush(stdout);
  for (std::int64_t n = first;; ++n) {
    lt::Tensor t = sized_graph(n, dev);
    lt::sync();
    lt::wait_device_ops();
  }
}

int verify(const std::string& dir, std::int64_t count) {
  lt::initialize_cache(dir, /*readonly=*/true);
  auto dev = lt::device();
  int wrong = 0;
  for (std::int64_t n = 1; n <= count; ++n) {
    lt::Tensor lazy = sized_graph(n, dev);
    lt::sync();
    std::vector<float> got = lazy.to_vector<float>(), want = sized_graph(n, lt::cpu).to_vector<float>();
    for (std::size_t i = 0; i < want.size(); ++i)
      if (!(std::fabs(got[i] - want[i]) <= 1e-4f * std::max(1.0f, std::fabs(want[i])))) ++wrong;
  }
  lt::wait_device_ops();
  print_counters();
  std::printf(" wrong=%d\n", wrong);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "run" && argc == 3) return run(argv[2]);
  if (mode == "write" && argc == 4) return write(argv[2], std::atoll(argv[3]));
  if (mode == "verify" && argc == 4) return verify(argv[2], std::atoll(argv[3]));
  std::fprintf(stderr, "usage: cache_probe run DIR | write DIR FIRST | verify DIR N\n");
  return 2;
}
