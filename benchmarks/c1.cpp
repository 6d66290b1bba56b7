// C1: what a miss costs. A step graph of 1,000 and of 100,000 nodes (elementwise ops recorded
// one by one, row reductions broadcast back, small matmuls) is walked and compiled with an
// empty plan cache: µs per node, and how the cost grows from 1,000 to 100,000 nodes (linear
// is 100x). Nothing runs: compiling does not look at data.
//
//   bench_c1 [--quick]
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#include <lazytensor/lazytensor.hpp>
#include <lazytensor/runtime/barrier.hpp>  // the scheduler itself is timed here

#include "common/timing.hpp"

namespace {

/// A graph of about `nodes` nodes over [16, 16] values: per group of 10 nodes, 7 elementwise
/// ops, a row sum broadcast back, and every fifth group a matmul.
lt::Tensor mixed_graph(std::int64_t nodes, lt::Device dev) {
  lt::Tensor x = lt::full({16, 16}, 0.5f, dev), w = lt::full({16, 16}, 0.01f, dev);
  std::int64_t made = 2;
  for (std::int64_t g = 0; made < nodes; ++g) {
    lt::Tensor a = x * w, b = a + x, c = lt::relu(b), d = c - w, e = lt::exp(d * 0.0f), f = e / x;
    lt::Tensor s = f.sum(1, true), y = f - s;
    made += 9;
    if (g % 5 == 4) {
      y = y.matmul(w);
      ++made;
    }
    x = y;
  }
  return x;
}

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  auto dev = lt::device();
  std::printf("C1: walk + compile of a graph with an empty plan cache (median of %d; us per node)\n", quick ? 3 : 7);
  double per_node_small = 0, small_total = 0;
  std::size_t small_nodes = 0;
  for (std::int64_t nodes : {std::int64_t{1000}, quick ? std::int64_t{20000} : std::int64_t{100000}}) {
    lt::Tensor root = mixed_graph(nodes, dev);
    std::vector<lt::NodePtr> roots{root.impl().node};
    std::size_t n = 0;
    double walk = bench::median_seconds([&] { n = lt::make_schedule(roots).order.size(); }, quick ? 3 : 7);
    double total = bench::median_seconds(
        [&] {
          lt::plan_cache().clear();
          lt::Plan plan = lt::make_plan(lt::make_schedule(roots));
          bench::keep(plan);
        },
        quick ? 3 : 7);
    double per_node = 1e6 * total / static_cast<double>(n);
    if (small_total == 0) small_total = total, per_node_small = per_node, small_nodes = n;
    std::printf(" %7zu nodes\n", n);
    bench::print_row("walk + key", 1e6 * walk / static_cast<double>(n), "us/node", walk / total);
    bench::print_row("walk + compile", per_node, "us/node", per_node / 5.0, 1e3 * total, "ms (ratio: / 5 us)");
    // Linear is a per-node ratio of 1; the target (120x the time for 100x the nodes) is 1.2.
    if (n != small_nodes)
      std::printf("  growth from the small graph: %.1fx the time for %.1fx the nodes (per node %.2fx; target <= 1.20)\n",
                  total / small_total, static_cast<double>(n) / static_cast<double>(small_nodes), per_node / per_node_small);
  }
  lt::wait_device_ops();
}
