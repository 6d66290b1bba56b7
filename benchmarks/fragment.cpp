// Fragments: what an elementwise expression costs to trace as one fragment against its ops
// traced one by one, and how fast the fragment's fused kernel runs against the same
// expression hand-written with Eigen arrays, at W1's size (N = 2^24 floats), 1 and 2 threads.
//
//   bench_fragment [--quick]
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#include <lazytensor/lazytensor.hpp>

#include "common/eigen_w1.hpp"
#include "common/timing.hpp"

namespace {

using bench::median_seconds;

/// The 6-op expression of the trace benchmark, as one fragment.
lt::Tensor six_ops_fused(const lt::Tensor& a, const lt::Tensor& b, const lt::Tensor& c) {
  return lt::relu(a * b + c) * 0.5f - b * c;
}
/// The same 6 ops, each recorded as its own node.
lt::Tensor six_ops_one_by_one(const lt::Tensor& a, const lt::Tensor& b, const lt::Tensor& c) {
  lt::Tensor ab = a * b, s = ab + c, r = lt::relu(s), h = r * 0.5f, bc = b * c;
  return h - bc;
}

/// ns per op of tracing `f` (6 ops), median over repetitions of `iters` traces each.
template <class F>
double trace_ns_per_op(F&& f, const lt::Tensor& a, const lt::Tensor& b, const lt::Tensor& c, int iters) {
  double s = median_seconds(
      [&] {
        for (int k = 0; k < iters; ++k) {
          lt::Tensor y = f(a, b, c);
          bench::keep(y);
        }
      },
      9);
  return 1e9 * s / iters / 6;
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  lt::manual_seed(0);
  auto dev = lt::device();

  // --- trace cost ---
  {
    lt::Tensor a = lt::rand({1024}, dev), b = lt::rand({1024}, dev), c = lt::rand({1024}, dev);
    lt::sync();
    int iters = quick ? 2000 : 20000;
    double fused = trace_ns_per_op(six_ops_fused, a, b, c, iters);
    double one_by_one = trace_ns_per_op(six_ops_one_by_one, a, b, c, iters);
    std::printf("trace, 6-op expression (median of 9 x %d traces)\n", iters);
    bench::print_row("as one fragment", fused, "ns/op", 1.0);
    bench::print_row("op by op", one_by_one, "ns/op", one_by_one / fused);
    std::printf("  fragment is %.1fx cheaper to trace\n\n", one_by_one / fused);
  }

  // --- kernel: W1 at N = 2^24 ---
  const std::int64_t n = quick ? (1 << 20) : (1 << 24);
  lt::Tensor a = lt::rand({n}, dev) * 2 - 1, b = lt::rand({n}, dev) * 2 - 1, c = lt::rand({n}, dev) * 2 - 1;
  lt::sync();
  lt::wait_device_ops();  // the kernel below reads a, b and c's buffers directly
  lt::Tensor y = lt::maximum(a * b + c, 0.0f) * 0.5f - b;  // W1's expression: one fragment
  const lt::Node& node = *y.impl().node;
  std::vector<lt::View> in;
  for (const lt::NodePtr& p : node.inputs) in.push_back(p->leaf().data.view);
  lt::Array out = lt::Array::empty(lt::f32, lt::Shape{n});
  std::vector<float> hand(static_cast<std::size_t>(n));
  const float *pa = in[0].ptr<float>(), *pb = in[1].ptr<float>(), *pc = in[2].ptr<float>();
  const double gb = 16.0 * static_cast<double>(n) / 1e9;
  // The grain the fragment kernel picks for its 5 ops (kernels::parallel_for_each_block).
  const std::int64_t grain = lt::kernels::parallel_threshold / 5;

  std::printf("W1 kernel, N = %lld floats, out = max(a*b + c, 0) * 0.5 - b (medians of 21 alternating runs; GB/s at 16 B/element)\n",
              static_cast<long long>(n));
  for (int threads : {1, 2}) {
    bench::with_threads(threads, [&] {
      auto [t_fragment, t_eigen] = bench::median_seconds_paired(
          [&] { node.op->kernel(in, out.view, node.attrs); },
          [&] { bench::eigen_w1(pa, pb, pc, hand.data(), n, grain); }, 21);
      std::printf(" %d thread%s\n", threads, threads > 1 ? "s" : "");
      bench::print_row("fragment kernel", 1e3 * t_fragment, "ms", t_eigen / t_fragment, gb / t_fragment, "GB/s");
      bench::print_row("hand-written Eigen", 1e3 * t_eigen, "ms", 1.0, gb / t_eigen, "GB/s");
    });
  }
  // The two must agree bitwise: the benchmark compares equal work.
  if (std::memcmp(out.view.ptr<float>(), hand.data(), sizeof(float) * static_cast<std::size_t>(n)) != 0)
    std::printf("  note: fragment and Eigen results differ in some bits\n");
  std::printf("  (ratio column: Eigen time / fragment time; >= 0.95 is the target)\n");
}
