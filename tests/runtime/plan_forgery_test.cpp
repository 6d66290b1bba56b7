// Plans read back from bytes whose every field an attacker chose (a recomputed checksum makes
// any entry look sound): the loader raises lt::Error for each forgery, never reads or writes
// out of bounds, and never takes a plan that would compute a wrong value.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include <lazytensor/lazytensor.hpp>
#include <lazytensor/runtime/barrier.hpp>  // the runtime's internals, tested here

#include "plan_oracle.hpp"

namespace lt {
namespace {

std::size_t idx(int p) { return static_cast<std::size_t>(p); }

/// A compiled plan and the graph it was compiled for.
struct Compiled {
  std::vector<Tensor> ts;
  Schedule schedule;
  Plan plan;
};

Compiled compile(std::vector<Tensor> ts) {
  std::vector<NodePtr> roots = oracle::roots_of(ts);
  Compiled c{std::move(ts), make_schedule(roots), {}};
  c.plan = make_plan(c.schedule);
  return c;
}

/// A row softmax over rows of 33 and a matmul feeding it: a row group, an arena, views.
Compiled softmax_graph() {
  Tensor x = randn({16, 33}, device()), w = randn({33, 33}, device());
  sync();
  Tensor h = x.matmul(w) * 0.5f;
  Tensor y = softmax(h + 1.0f, 1) * 2.0f;
  return compile({y.t(), Tensor(y - 1.0f).sum(1)});
}

FusionGroup& row_group(Plan& p) {
  auto it = std::find_if(p.groups.begin(), p.groups.end(), [](const FusionGroup& g) { return g.reduced_from >= 0 && g.members.size() > 1; });
  EXPECT_NE(it, p.groups.end());
  return *it;
}

/// Expects the loader to refuse `plan` once `forge` changed it.
void expect_refused(const Plan& plan, const std::string& what, const std::function<void(Plan&)>& forge) {
  Plan forged = plan;
  forge(forged);
  EXPECT_THROW(deserialize_plan(serialize_plan(forged)), Error) << what;
}

TEST(PlanForgery, TheCompiledPlanLoadsAndRunsAsCompiled) {
  Compiled c = softmax_graph();
  ASSERT_GT(c.plan.stats.row_groups, 0);
  ASSERT_GT(c.plan.stats.arena_bytes, 0);
  oracle::expect_same_bits_as_reference(c.plan, c.schedule, c.ts, "softmax graph");
}

TEST(PlanForgery, EdgeOffsetsAreAllCheckedBeforeAnyListIsWalked) {
  Compiled c = softmax_graph();
  expect_refused(c.plan, "an offset past the edges, then back", [](Plan& p) {
    ASSERT_GT(p.inputs.offsets.size(), 3u);
    p.inputs.offsets[1] = static_cast<int>(p.inputs.flat.size()) + 1000;
  });
  expect_refused(c.plan, "a negative offset", [](Plan& p) { p.inputs.offsets[1] = -5; });
}

TEST(PlanForgery, ExtentsWhoseProductsOverflowAreRefused) {
  Compiled c = softmax_graph();
  const std::int64_t huge = std::numeric_limits<std::int64_t>::max();
  expect_refused(c.plan, "a node of INT64_MAX x 2 elements", [&](Plan& p) { p.nodes[0].meta.shape = Shape{huge, 2}; });
  expect_refused(c.plan, "nodes whose elements sum past 64 bits", [&](Plan& p) {
    p.nodes[0].meta.shape = Shape{huge / 2 + 1};
    p.nodes[1].meta.shape = Shape{huge / 2 + 1};
  });
  expect_refused(c.plan, "a zero extent beside two of 2^32", [&](Plan& p) {
    p.nodes[0].meta.shape = Shape{0, std::int64_t{1} << 32, std::int64_t{1} << 32};
  });
  expect_refused(c.plan, "a group of INT64_MAX x 2", [&](Plan& p) { row_group(p).shape = Shape{huge, 2}; });
}

TEST(PlanForgery, AGroupIsCheckedAgainstItsMembers) {
  Compiled c = softmax_graph();
  expect_refused(c.plan, "a row of 16,645,921 where the group's rows are 33", [](Plan& p) { row_group(p).row = 16645921; });
  expect_refused(c.plan, "a group shape larger than its members", [](Plan& p) {
    FusionGroup& g = row_group(p);
    g.shape[0] *= 64;
  });
  expect_refused(c.plan, "reduced dims that are not the group's row", [](Plan& p) {
    FusionGroup& g = row_group(p);
    g.reduced_from = 0;
    g.row = g.shape.numel();
  });
  expect_refused(c.plan, "a member wired to another input", [](Plan& p) {
    FusionGroup& g = row_group(p);
    for (GroupMember& m : g.members)
      if (m.inputs.size() == 2 && m.inputs[0] != m.inputs[1]) return std::swap(m.inputs[0], m.inputs[1]);
    FAIL() << "no member of two distinct inputs";
  });
  expect_refused(c.plan, "an external read over another space", [](Plan& p) {
    FusionGroup& g = row_group(p);
    ASSERT_FALSE(g.externals.empty());
    g.externals[0].index_space = Shape{g.shape.numel()};
  });
  expect_refused(c.plan, "a full member posing as one per row", [](Plan& p) {
    for (GroupMember& m : row_group(p).members)
      if (m.role == MemberRole::full) return void(m.role = MemberRole::row);
  });
  expect_refused(c.plan, "a node in two groups", [](Plan& p) {
    FusionGroup copy = row_group(p);
    p.groups.push_back(copy);
    p.steps.push_back({copy.members[0].position, static_cast<int>(p.groups.size()) - 1});
  });
}

TEST(PlanForgery, StepsRunInAnOrderThatMakesEveryInputFirst) {
  Compiled c = softmax_graph();
  ASSERT_GT(c.plan.steps.size(), 1u);
  expect_refused(c.plan, "the last step first", [](Plan& p) { std::rotate(p.steps.rbegin(), p.steps.rbegin() + 1, p.steps.rend()); });
  expect_refused(c.plan, "a step dropped", [](Plan& p) { p.steps.erase(p.steps.begin()); });
  expect_refused(c.plan, "a step run twice", [](Plan& p) { p.steps.push_back(p.steps.back()); });
  expect_refused(c.plan, "values read outside their groups never made in full", [](Plan& p) {
    for (const FusionGroup& g : p.groups)
      for (const GroupMember& m : g.members) p.materialized[idx(m.position)] = 0;
  });
}

TEST(PlanForgery, ArenaValuesAliveTogetherNeverShareBytes) {
  Compiled c = softmax_graph();
  std::vector<int> placed;
  for (std::size_t p = 0; p < c.plan.arena_offset.size(); ++p)
    if (c.plan.arena_offset[p] >= 0) placed.push_back(static_cast<int>(p));
  ASSERT_FALSE(placed.empty());
  expect_refused(c.plan, "a root placed in the arena", [](Plan& p) {
    p.arena_offset[static_cast<std::size_t>(p.roots[0])] = 0;
    p.stats.arena_bytes += 1 << 20;
  });
  expect_refused(c.plan, "a value past the arena's end", [&](Plan& p) { p.arena_offset[idx(placed[0])] = p.stats.arena_bytes; });
  expect_refused(c.plan, "an arena far larger than its values", [](Plan& p) { p.stats.arena_bytes = std::int64_t{1} << 50; });
  expect_refused(c.plan, "an unaligned value", [&](Plan& p) { p.arena_offset[idx(placed[0])] += 4; });
  // Every value its own arena is accepted; a value moved onto another alive with it is not.
  Plan apart = c.plan;
  std::int64_t top = 0;
  for (int p : placed) {
    apart.arena_offset[idx(p)] = top;
    top += (apart.nodes[idx(p)].meta.shape.numel() * 4 + 63) / 64 * 64;
  }
  apart.stats.arena_bytes = top;
  Plan loaded = deserialize_plan(serialize_plan(apart));
  oracle::expect_same_bits_as_reference(loaded, c.schedule, c.ts, "values side by side");
  // The matmul's output (read by the group) and the group's made-in-full value are alive together.
  Compiled two = compile([] {
    Tensor x = randn({64, 40}, device()), w = randn({40, 40}, device());
    sync();
    Tensor h = x.matmul(w);
    Tensor a = exp(h) + 1.0f;
    return std::vector<Tensor>{Tensor(a.matmul(w) + h).sum()};
  }());
  std::vector<int> in_arena;
  for (std::size_t p = 0; p < two.plan.arena_offset.size(); ++p)
    if (two.plan.arena_offset[p] >= 0) in_arena.push_back(static_cast<int>(p));
  ASSERT_GE(in_arena.size(), 2u);
  expect_refused(two.plan, "two values alive together at one offset", [&](Plan& p) {
    for (int q : in_arena) p.arena_offset[idx(q)] = 0;
  });
}

}  // namespace
}  // namespace lt
