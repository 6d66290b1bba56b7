// Fuzzes the plan loader with plans whose every byte an attacker chose: the payload of a
// cache entry, its checksum recomputed (the loader checks payloads alone). A plan the loader
// takes and that fits one of a few fixed graphs is run on that graph, and its results must
// equal, bit for bit, those of the plan compiled for the graph: a forged plan may be
// refused, never run wrong. ASan and UBSan catch the rest.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <limits>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <lazytensor/lazytensor.hpp>
#include <lazytensor/runtime/barrier.hpp>  // plans, schedules and the executor

#include "harness.hpp"
#include "../runtime/same_bits.hpp"

namespace {

using namespace lt;

/// A graph left pending, its schedule, its compiled plan and that plan's results.
struct FuzzGraph {
  std::string name;
  std::vector<Tensor> roots;
  std::vector<NodePtr> nodes;  // the graph itself: the next graph's barrier cuts the tensors' graphs
  Schedule schedule;
  Plan compiled;
  std::vector<Array> expected;
};

std::vector<Tensor> softmax_rows() {
  Tensor x = randn({16, 33}, device()), w = randn({33, 33}, device());
  lt::sync();
  Tensor y = softmax(Tensor(x.matmul(w) * 0.5f) + 1.0f, 1) * 2.0f;
  return {y.t(), Tensor(y - 1.0f).sum(1)};
}
std::vector<Tensor> layer_norm_rows() {
  Tensor x = randn({8, 2, 16}, device()), g = randn({2, 16}, device()), b = randn({2, 16}, device());
  lt::sync();
  return {relu(layer_norm(x, {2, 16}, g, b)) + x};
}
std::vector<Tensor> gemm_epilogue() {
  Tensor x = randn({24, 40}, device()), w = randn({48, 40}, device()), b = randn({48}, device());
  lt::sync();
  Tensor h = relu(linear(x, w, b)) * 0.5f;
  return {h, Tensor(h * h).sum(0)};
}
std::vector<Tensor> conv_pool() {
  Tensor x = randn({2, 3, 10, 10}, device()), w = randn({4, 3, 3, 3}, device());
  lt::sync();
  Tensor c = relu(conv2d(x, w, std::nullopt, 1, 1));
  Tensor p = max_pool2d(c, 2);
  return {Tensor(exp(p) - 1.0f).sum({2, 3}), avg_pool2d(c, 3, 1, 1).reshape({2, -1}).mean(1)};
}
std::vector<Tensor> integers() {
  Tensor a = randint(-100, 100, {6, 7}, device()), b = randint(1, 9, {7}, device());
  lt::sync();
  Tensor m = fmod(Tensor(a * b + 3), b);
  return {Tensor(where(m > 1, m, -m)).sum(0), Tensor(a - b).amax(1)};
}

std::vector<FuzzGraph>& graphs() {
  static std::vector<FuzzGraph> all = [] {
    manual_seed(7);
    std::vector<std::pair<std::string, std::function<std::vector<Tensor>()>>> makers = {
        {"softmax_rows", softmax_rows}, {"layer_norm_rows", layer_norm_rows}, {"gemm_epilogue", gemm_epilogue},
        {"conv_pool", conv_pool},       {"integers", integers}};
    std::vector<FuzzGraph> out;
    for (auto& [name, make] : makers) {
      FuzzGraph g{name, make(), {}, {}, {}, {}};
      for (const Tensor& t : g.roots) g.nodes.push_back(t.impl().node);
      g.schedule = make_schedule(g.nodes);
      g.compiled = make_plan(g.schedule);
      g.expected = run_plan(g.compiled, g.schedule);
      out.push_back(std::move(g));
    }
    return out;
  }();
  return all;
}

void write_bytes(const std::filesystem::path& path, const std::vector<std::byte>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::vector<FuzzGraph>& all = graphs();
  Plan plan;
  try {
    plan = deserialize_plan(std::span(reinterpret_cast<const std::byte*>(data), size));
  } catch (const lt::Error&) {
    return 0;  // refused: a miss
  }
  for (FuzzGraph& g : all) {
    if (first_difference(plan, g.schedule) >= 0) continue;
    std::vector<Array> got;
    try {
      got = run_plan(plan, g.schedule);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "a plan taken for %s raised while running: %s\n", g.name.c_str(), e.what());
      std::abort();
    }
    for (std::size_t k = 0; k < got.size(); ++k)
      if (k >= g.expected.size() || !oracle::same_bits(got[k], g.expected[k])) {
        std::fprintf(stderr, "a plan taken for %s computes root %zu wrong\n", g.name.c_str(), k);
        std::abort();
      }
  }
  return 0;
}

/// The compiled plan of each graph, and one forged plan per kind of forgery the loader once
/// took: each must stay a refusal (or run right).
void write_fuzz_seeds(const std::filesystem::path& dir) {
  std::vector<FuzzGraph>& all = graphs();
  for (const FuzzGraph& g : all) write_bytes(dir / ("plan-" + g.name), serialize_plan(g.compiled));
  const Plan& base = all[0].compiled;  // holds a row group, an arena, views
  auto forged = [&](const std::string& name, const std::function<void(Plan&)>& forge) {
    Plan p = base;
    forge(p);
    write_bytes(dir / ("forged-" + name), serialize_plan(p));
  };
  auto row_group = [](Plan& p) -> FusionGroup& {
    for (FusionGroup& g : p.groups)
      if (g.reduced_from >= 0 && g.members.size() > 1) return g;
    return p.groups.at(0);
  };
  forged("edge-offset-past-the-edges", [](Plan& p) { p.inputs.offsets[1] = static_cast<int>(p.inputs.flat.size()) + 1000; });
  forged("row-16645921", [&](Plan& p) { row_group(p).row = 16645921; });
  forged("group-shape-larger", [&](Plan& p) { row_group(p).shape[0] *= 64; });
  forged("extent-int64-max", [](Plan& p) { p.nodes[0].meta.shape = Shape{std::numeric_limits<std::int64_t>::max(), 2}; });
  forged("elements-sum-past-64-bits", [](Plan& p) {
    p.nodes[0].meta.shape = p.nodes[1].meta.shape = Shape{std::numeric_limits<std::int64_t>::max() / 2 + 1};
  });
  forged("root-in-arena", [](Plan& p) {
    p.arena_offset[static_cast<std::size_t>(p.roots[0])] = 0;
    p.stats.arena_bytes += 1 << 20;
  });
  forged("steps-reversed", [](Plan& p) { std::reverse(p.steps.begin(), p.steps.end()); });
  forged("arena-values-overlap", [](Plan& p) {
    for (std::int64_t& offset : p.arena_offset)
      if (offset > 0) offset = 0;
  });
  forged("member-wired-to-another-input", [&](Plan& p) {
    for (GroupMember& m : row_group(p).members)
      if (m.inputs.size() == 2) return std::swap(m.inputs[0], m.inputs[1]);
  });
}
