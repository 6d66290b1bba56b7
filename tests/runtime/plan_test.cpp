// Plans: elementwise ops of one shape run as one fused group over tiles, whose intermediates
// never reach memory, and every plan computes bitwise what the reference executor computes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <random>
#include <utility>
#include <string>
#include <vector>

#include <lazytensor/lazytensor.hpp>
#include <lazytensor/runtime/barrier.hpp>  // the runtime's internals, tested here

#include "plan_oracle.hpp"

namespace lt {
namespace {

using oracle::expect_plan_matches_reference;

TEST(Plan, W1WrittenOpByOpIsOneKernelWithNoIntermediates) {
  const std::int64_t n = 100003;  // not a multiple of the tile
  Tensor a = rand({n}, device()), b = rand({n}, device()), c = rand({n}, device());
  sync();
  Tensor ab = a * b, s = ab + c, m = maximum(s, 0.0), h = m * 0.5, out = h - b;
  PlanStats stats = debug::plan_stats({out});
  EXPECT_EQ(stats.kernels, 1);
  EXPECT_EQ(stats.fused_groups, 1);
  EXPECT_EQ(stats.fused_ops, 5);
  EXPECT_EQ(stats.intermediate_bytes, 0);
  expect_plan_matches_reference({out}, "W1");

  // A value read outside its group is made in full, and only that one.
  Tensor total = sum(m);
  stats = debug::plan_stats({out, total});
  EXPECT_EQ(stats.intermediate_bytes, n * 4);
  expect_plan_matches_reference({out, total}, "W1 + sum");
}

// Values a group only passes on are made in the tile of the value they are computed from,
// where no later member reads that value: a value still read later keeps its own tile.
TEST(Plan, ChainedValuesShareATileOnlyWhereNothingLaterReadsTheOlderOne) {
  const std::int64_t n = 5003;  // several tiles and a tail
  Tensor a = randn({n}, device()), b = randn({n}, device());
  Tensor d = randn({n}, device(), DType::f64);
  sync();
  Tensor s = a * b;
  Tensor t = s + 1.0f;        // s is read again below: t must not overwrite it
  Tensor u = t * s;           // t is read by nothing later: u may be made over it
  Tensor w = maximum(u, s);   // u and s read for the last time: w made over u
  Tensor e = d * 2.0 + w;     // wider values, w converted; e made in wide's tile
  Tensor out = w * 0.5f - a, wide = e - d;
  PlanStats stats = debug::plan_stats({out, wide});
  EXPECT_EQ(stats.kernels, 1);
  EXPECT_EQ(stats.intermediate_bytes, 0);
  const std::int64_t row_loops = metrics::counter("RowLoopGroups");
  expect_plan_matches_reference({out, wide}, "chained values");
  EXPECT_EQ(metrics::counter("RowLoopGroups") - row_loops, 1) << "the group ran in the row loop";
  std::vector<float> va = a.to_vector<float>(), vb = b.to_vector<float>(), vo = out.to_vector<float>();
  std::vector<double> vd = d.to_vector<double>(), vw = wide.to_vector<double>();
  // Beside the bit-for-bit check, a plain loop (which the compiler may contract into FMAs).
  for (std::size_t j = 0; j < va.size(); ++j) {
    const float sj = va[j] * vb[j], uj = (sj + 1.0f) * sj, wj = std::max(uj, sj);
    ASSERT_NEAR(vo[j], wj * 0.5f - va[j], 1e-5f * (1.0f + std::abs(wj))) << j;
    ASSERT_NEAR(vw[j], (vd[j] * 2.0 + static_cast<double>(wj)) - vd[j], 1e-12 * (1.0 + std::abs(vd[j]))) << j;
  }
}

TEST(Plan, W1AsOneExpressionIsOneKernelWithNoIntermediates) {
  Tensor a = rand({4096}, device()), b = rand({4096}, device()), c = rand({4096}, device());
  sync();
  Tensor out = maximum(a * b + c, 0.0f) * 0.5f - b;
  PlanStats stats = debug::plan_stats({out});
  EXPECT_EQ(stats.kernels, 1);
  EXPECT_EQ(stats.intermediate_bytes, 0);
}

TEST(Plan, LargeOutputsStreamedPastTheCachesHoldTheRightValues) {
  // 2^23 + 5 floats: over the streaming threshold, with a tail that is not a whole packet.
  const std::int64_t n = (std::int64_t{1} << 23) + 5;
  Tensor a = randn({n}, device()), b = randn({n}, device()), c = randn({n}, device());
  sync();
  Tensor out = maximum(a * b + c, 0.0f) * 0.5f - b;
  std::vector<float> va = a.to_vector<float>(), vb = b.to_vector<float>(), vc = c.to_vector<float>();
  std::vector<float> vo = out.to_vector<float>();
  std::int64_t wrong = 0;
  for (std::size_t i = 0; i < vo.size(); ++i) {
    float ab = va[i] * vb[i];
    float s = ab + vc[i];
    float expect = (s < 0.0f ? 0.0f : s) * 0.5f - vb[i];
    wrong += std::abs(vo[i] - expect) > 1e-6f * (1.0f + std::abs(expect));
  }
  EXPECT_EQ(wrong, 0);
}

TEST(Plan, SoftmaxWrittenAsFiveOpsIsOneKernelWithNoIntermediates) {
  Tensor x = randn({64, 1000}, device());
  sync();
  Tensor m = amax(x, 1, true), shifted = x - m, e = exp(shifted), s = sum(e, 1, true), y = e / s;
  PlanStats stats = debug::plan_stats({y});
  EXPECT_EQ(stats.kernels, 1);
  EXPECT_EQ(stats.fused_ops, 5);
  EXPECT_EQ(stats.intermediate_bytes, 0);
  expect_plan_matches_reference({y}, "softmax");
  // Each row sums to one, checked against a plain loop over the values read back.
  std::vector<float> v = y.to_vector<float>();
  for (int r = 0; r < 64; ++r) {
    double total = 0;
    for (int c = 0; c < 1000; ++c) total += v[static_cast<std::size_t>(r * 1000 + c)];
    EXPECT_NEAR(total, 1.0, 1e-5) << "row " << r;
  }
}

TEST(Plan, LogSoftmaxAndLayerNormAreOneKernelEach) {
  Tensor x = randn({3, 5, 300}, device()), w = randn({300}, device()), b = randn({300}, device());
  sync();
  Tensor ls = log_softmax(x, -1);
  PlanStats stats = debug::plan_stats({ls});
  EXPECT_EQ(stats.kernels, 1);
  EXPECT_EQ(stats.intermediate_bytes, 0);
  expect_plan_matches_reference({ls}, "log_softmax");
  Tensor ln = layer_norm(x, Shape{300}, w, b);
  stats = debug::plan_stats({ln});
  EXPECT_EQ(stats.kernels, 1);
  EXPECT_EQ(stats.intermediate_bytes, 0);
  expect_plan_matches_reference({ln}, "layer_norm");
  // Over the two trailing dims, with a reduction result read outside the group as well.
  Tensor mu = mean(x, Dims{1, 2}, true), centred = x - mu;
  stats = debug::plan_stats({centred, mu});
  EXPECT_EQ(stats.kernels, 1);
  expect_plan_matches_reference({centred, mu}, "centred");
}

/// The terms of a sum made where their operands are ready (autograd's gradient of batch norm:
/// one term early, others after reductions over non-trailing dims) run as one group at the
/// last of them, and none of them is made in full.
TEST(Plan, TermsOfASumMadeApartRunAsOneGroup) {
  Tensor x = randn({64, 8, 6, 6}, device()), g = randn({64, 8, 6, 6}, device()), s = randn({1, 8, 1, 1}, device());
  sync();
  Tensor early = g * s;
  Tensor centred = (x - mean(x, Dims{0, 2, 3}, true)) * 0.5;
  Tensor shift = sum(g, Dims{0, 2, 3}, true) / 9.0;
  Tensor out = where(x > 0.0, early + centred + shift, 0.0);
  PlanStats stats = debug::plan_stats({out});
  EXPECT_EQ(stats.fused_groups, 1);
  EXPECT_LT(stats.intermediate_bytes, x.numel() * 4);  // only the per-channel values
  expect_plan_matches_reference({out}, "terms made apart");
  // Read outside before the late term, the early term's group cannot wait for it.
  Tensor read_early = sum(early, Dims{0, 2, 3});
  stats = debug::plan_stats({out, read_early});
  EXPECT_GE(stats.intermediate_bytes, x.numel() * 4);
  expect_plan_matches_reference({out, read_early}, "early term read outside");
}

/// The row loop runs a group when every member has a bound form for its operands: here
/// reductions whose rows or results convert (f32 var and argmax read rows as f64; an f32 sum
/// combines its chunks in f64; argmax gives i64; a sum of bools reads them as i64), C++
/// scalars, row values broadcast along rows, and rows longer than a reduction chunk, and
/// elementwise members reading another dtype than they compute in (f32 times bool, where's
/// bool condition): every conversion a tile at a time.
TEST(Plan, GroupsWithBoundMembersRunInTheRowLoop) {
  auto loop_counts = [] { return std::pair{metrics::counter("RowLoopGroups"), metrics::counter("TileViewGroups")}; };
  for (std::int64_t cols : {1000, 5000}) {
    Tensor x = randn({48, cols}, device());
    sync();
    auto [rows_before, views_before] = loop_counts();
    Tensor s = sum(x * 2.0f, 1, true), y = (x - s) * 0.5f + amax(x, 1, true), i = argmax(x - s, 1, true) + 1;
    Tensor v = (x - mean(x, Dims{1}, true)) / var(x, Dims{1}, 0, true);
    expect_plan_matches_reference({y, i, s, v}, "bound members, cols " + std::to_string(cols));
    auto [rows_after, views_after] = loop_counts();
    EXPECT_GE(rows_after - rows_before, 1) << cols;
    EXPECT_EQ(views_after, views_before) << cols;
    // A plain-loop check beside the bit-for-bit one: y's first row.
    std::vector<float> vx = x.to_vector<float>(), vy = y.to_vector<float>();
    double total = 0;
    float top = vx[0];
    for (std::int64_t c = 0; c < cols; ++c) {
      total += 2.0 * vx[static_cast<std::size_t>(c)];
      top = std::max(top, vx[static_cast<std::size_t>(c)]);
    }
    EXPECT_NEAR(vy[0], (vx[0] - total) * 0.5 + top, 1e-3 * (1 + std::abs(total)));
  }
  Tensor x = randn({8, 300}, device());
  Tensor mask = x > 0.0f;
  sync();
  auto [rows_before, views_before] = loop_counts();
  Tensor v = x * mask - mean(x, Dims{1}, true);
  Tensor w = where(mask, x - mean(x, Dims{1}, true), 0.5f);
  Tensor positives = sum(mask, 1, true) + (x > 1.0f);
  expect_plan_matches_reference({v, w, positives}, "f32 times bool, where, a sum of bools");
  EXPECT_EQ(loop_counts().second, views_before);
  EXPECT_GE(loop_counts().first - rows_before, 1);
  std::vector<float> vx = x.to_vector<float>(), vv = v.to_vector<float>(), vw = w.to_vector<float>();
  std::vector<std::int64_t> vp = positives.to_vector<std::int64_t>();
  double mean0 = 0;
  std::int64_t count0 = 0;
  for (std::size_t c = 0; c < 300; ++c) {
    mean0 += vx[c] / 300.0;
    count0 += vx[c] > 0;
  }
  EXPECT_EQ(vp[0], count0 + (vx[0] > 1.0f));
  for (std::size_t c = 0; c < 300; ++c) {
    EXPECT_NEAR(vv[c], (vx[c] > 0 ? vx[c] : 0.0) - mean0, 1e-5) << c;
    EXPECT_NEAR(vw[c], vx[c] > 0 ? vx[c] - mean0 : 0.5, 1e-5) << c;
  }
}

// A shape-static loop runs one plan: the row loops its first run bound are bound again at each
// step, to that step's values, scalars and constants, which change from step to step.
TEST(Plan, RowLoopsBoundByOneStepAreReboundToTheNextStepsValuesAndScalars) {
  const std::int64_t rows = 16, cols = 37;
  auto step = [](const Tensor& x, float scale, double shift) {
    Tensor z = x * scale + full(Shape{}, shift, x.device(), f32);
    Tensor e = exp(z - amax(z, 1, true));
    return std::vector<Tensor>{e / sum(e, 1, true), z};
  };
  const std::int64_t loops_before = metrics::counter("RowLoopGroups");
  const std::int64_t cached_before = metrics::counter("CachedCompile");
  for (int k = 0; k < 4; ++k) {
    SCOPED_TRACE(k);
    Tensor x = randn({rows, cols});
    // Neither scalar is ever 0 or 1, which would be folded into the graph's structure.
    const float scale = 0.5f + static_cast<float>(k);
    const double shift = -1.5 * (k + 1);
    std::vector<Tensor> lazy = step(x.to(device()), scale, shift), eager = step(x, scale, shift);
    sync();
    for (std::size_t j = 0; j < lazy.size(); ++j) {
      std::vector<float> got = lazy[j].to_vector<float>(), want = eager[j].to_vector<float>();
      ASSERT_EQ(got.size(), want.size());
      for (std::size_t i = 0; i < got.size(); ++i) ASSERT_NEAR(got[i], want[i], 1e-6 * (1 + std::abs(want[i]))) << j << ", " << i;
    }
  }
  EXPECT_EQ(metrics::counter("CachedCompile") - cached_before, 3) << "one plan for every step";
  EXPECT_GE(metrics::counter("RowLoopGroups") - loops_before, 4);
}

TEST(Plan, ARowLoopBoundToZeroIsBoundAgainForMinusZero) {
  // 0 and -0 share a plan (both are the class "zero"), but not a bound kernel: 1 / (x * s)
  // tells them apart.
  Tensor x = full({4, 9}, -2.0f, device());
  sync();
  const std::int64_t loops_before = metrics::counter("RowLoopGroups");
  for (float s : {0.0f, -0.0f, 0.0f}) {
    SCOPED_TRACE(s);
    Tensor p = x * s;  // two nodes: a group, its loop bound by the first step
    Tensor y = reciprocal(p) + 1.0f;
    sync();
    for (float v : y.to_vector<float>()) ASSERT_EQ(v, 1.0f / (-2.0f * s) + 1.0f);
  }
  EXPECT_EQ(metrics::counter("RowLoopGroups") - loops_before, 3);
}

/// A fragment in a row group reads a row's value (a reduction's result) through each slot that
/// names it: as its last input, read by one slot or by several, and as an earlier input; rows
/// of odd length leave a packet's tail in every row.
TEST(Plan, FragmentsReadARowValueThroughEverySlotThatNamesIt) {
  Tensor x = randn({13, 301}, device());
  sync();
  const std::int64_t rows_before = metrics::counter("RowLoopGroups");
  Tensor m = amax(x, 1, true);
  Tensor last_once = exp(x - m), last_thrice = (x - m) * (x - m) + m, first = m / (exp(x) + 2.0f);
  expect_plan_matches_reference({last_once, last_thrice, first}, "row value in fragments");
  EXPECT_GT(metrics::counter("RowLoopGroups"), rows_before);
  // Against a plain loop, row 7.
  std::vector<float> vx = x.to_vector<float>(), a = last_once.to_vector<float>(), b = last_thrice.to_vector<float>(),
                     c = first.to_vector<float>();
  const std::size_t row = 7 * 301;
  const float top = *std::max_element(vx.begin() + row, vx.begin() + row + 301);
  for (std::size_t i = row; i < row + 301; ++i) {
    EXPECT_FLOAT_EQ(a[i], std::exp(vx[i] - top)) << i;
    EXPECT_FLOAT_EQ(b[i], (vx[i] - top) * (vx[i] - top) + top) << i;
    EXPECT_FLOAT_EQ(c[i], top / (std::exp(vx[i]) + 2.0f)) << i;
  }
}

TEST(Plan, IntermediatesShareOneArenaByTheirLives) {
  Tensor a = randn({64, 64}, device());
  sync();
  const std::int64_t bytes = 64 * 64 * 4;
  // h1 lives while h2 is made, h2 while h3 is made: two places serve three values.
  Tensor h1 = matmul(a, a), h2 = matmul(h1, a), h3 = matmul(h2, a), out = matmul(h3, a);
  PlanStats stats = debug::plan_stats({out});
  EXPECT_EQ(stats.intermediate_bytes, 3 * bytes);
  EXPECT_EQ(stats.arena_bytes, 2 * bytes);
  expect_plan_matches_reference({out}, "matmul chain");
  // exp, alone after a copying flip, is the last reader of its input and writes over it.
  Tensor t = flip(a, Dims{0}), u = exp(t), v = matmul(u, a);
  stats = debug::plan_stats({v});
  EXPECT_EQ(stats.intermediate_bytes, 2 * bytes);
  EXPECT_EQ(stats.arena_bytes, bytes);
  expect_plan_matches_reference({v}, "in place");
  // After a matmul, exp is its epilogue: only exp's result is made.
  Tensor t2 = matmul(a, a), u2 = exp(t2), v2 = matmul(u2, a);
  stats = debug::plan_stats({v2});
  EXPECT_EQ(stats.intermediate_bytes, bytes);
  EXPECT_EQ(stats.arena_bytes, bytes);
  expect_plan_matches_reference({v2}, "epilogue");
  // A value that is read back (a root) never lives in the arena.
  stats = debug::plan_stats({v, t});
  EXPECT_EQ(stats.arena_bytes, bytes);
  expect_plan_matches_reference({v, t}, "root kept");
}

TEST(Plan, AScheduleWalkedIntoTheListsOfALargerOneHoldsOnlyItsOwnGraph) {
  Tensor x = full({4}, 2.0f, device());
  Tensor small = exp(x * 3.0f) - x;
  const std::vector<NodePtr> small_roots{small.impl().node};
  const Schedule alone = make_schedule(small_roots);
  std::size_t large_size = 0;
  {
    Tensor big = x;
    for (int k = 0; k < 5000; ++k) big = big * 1.5f;
    Schedule large = make_schedule(std::vector<NodePtr>{big.impl().node});
    large_size = large.order.size();
    EXPECT_GT(large_size, 5000u);
  }  // dropped: its lists wait for the next walk
  const Schedule reused = make_schedule(small_roots);
  EXPECT_GE(reused.order.capacity(), large_size);
  EXPECT_EQ(reused.order, alone.order);
  EXPECT_EQ(reused.inputs, alone.inputs);
  EXPECT_EQ(reused.uses, alone.uses);
  EXPECT_EQ(reused.roots, alone.roots);
  EXPECT_EQ(reused.key, alone.key);
}

/// Random step graphs: mixed elementwise ops, broadcasts, views, reductions and matmuls (with
/// and without elementwise ops on their results), each run by a plan and by the reference
/// executor. The plan must agree bit for bit (tolerance 0): a fused group runs each op's own
/// kernel on tiles, in the same order of operations, and a product's tiles are its own.
/// In bf16 each computing op is recorded as casts to f32, the op, and a cast back: the casts
/// fuse into their neighbours' loops, with the same bits as the reference executor's.
void random_graphs_match_reference(DType t, int graphs, bool on_views = false) {
  const std::uint64_t seed = 20261122;
  std::mt19937_64 rng(seed);
  auto pick = [&](std::size_t n) { return static_cast<std::size_t>(rng() % n); };
  int fused_groups = 0, fused_ops = 0, row_groups = 0, gemm_epilogues = 0;
  const std::int64_t row_loops_before = metrics::counter("RowLoopGroups"), tile_views_before = metrics::counter("TileViewGroups");
  // [2, 2500]: rows longer than a reduction chunk.
  const std::vector<Shape> shapes = {{6, 37}, {37}, {6, 1}, {1, 37}, {}, {3, 6, 37}, {2, 2500}};
  for (int gi = 0; gi < graphs; ++gi) {
    SCOPED_TRACE("graph " + std::to_string(gi) + " of the graphs from seed " + std::to_string(seed));
    manual_seed(rng());
    std::vector<Tensor> pool;
    for (int k = 0; k < 3; ++k) pool.push_back(randn(shapes[pick(shapes.size())], device(), t));
    pool.push_back(randn({37, 6}, device(), t).t());  // a non-contiguous [6, 37]
    pool.push_back(randn({6, 74}, device(), t).slice(1, 0, std::nullopt, 2));
    sync();
    const int ops = 4 + static_cast<int>(pick(14));
    for (int k = 0; k < ops; ++k) {
      const Tensor& x = pool[pick(pool.size())];
      const Tensor& y = pool[pick(pool.size())];
      // A product's operand with 37 columns: x when it has them, else the transposed [6, 37].
      const Tensor& x37 = x.dim() >= 1 && x.size(-1) == 37 ? x : pool[3];
      try {
        switch (pick(24)) {
          case 0: pool.push_back(x + y); break;
          case 1: pool.push_back(x * y); break;
          case 2: pool.push_back(x - y * 0.5); break;  // a fragment inside the graph
          case 3: pool.push_back(maximum(x, y)); break;
          case 4: pool.push_back(x / (abs(y) + 1)); break;
          case 5: pool.push_back(exp(x.clamp(-3, 3))); break;
          case 6: pool.push_back(relu(x)); break;
          case 7: pool.push_back(tanh(x)); break;
          case 8: pool.push_back(where(x > y, x, 2.0)); break;
          case 9: pool.push_back(Tensor(x < 0.25).to(t)); break;
          case 10: if (x.dim() > 0) pool.push_back(sum(x, -1, true)); break;
          case 11: if (x.dim() == 2 && x.size(1) == 37) pool.push_back(matmul(x, randn({37, 5}, device(), t))); break;
          case 12: if (x.dim() >= 1) pool.push_back(x.transpose(0, -1)); break;
          // Reductions over trailing dims with what reads their results: row groups.
          case 13: if (x.dim() > 0) pool.push_back(x - amax(x, -1, true)); break;
          case 14: if (x.dim() > 0) pool.push_back(x / sum(exp(x), -1, true)); break;
          case 15: if (x.dim() >= 2) pool.push_back(mean(x, Dims{x.dim() - 2, x.dim() - 1}, true) * 2.0 + x); break;
          case 16: if (x.dim() > 0) pool.push_back((x - mean(x, -1, true)) * rsqrt(var(x, Dims{x.dim() - 1}, 0, true) + 1e-5)); break;
          case 17: if (x.dim() > 0) pool.push_back(amin(x, -1) + 1.0); break;
          case 18: pool.push_back(sum(x * y)); break;
          // Products of the pool's shapes, which later ops read as epilogues, and products
          // with their epilogue written out: [37] and [.., 37] times [37, 37] (a transposed
          // weight, as linear has it), batched, vectors.
          case 19: pool.push_back(matmul(x37, randn({37, 37}, device(), t).t())); break;
          case 20: pool.push_back(relu(matmul(x37, randn({37, 37}, device(), t)) + y)); break;
          case 21: pool.push_back(linear(x37, randn({37, 37}, device(), t), y.dim() == 1 ? y : randn({37}, device(), t)) * 0.5 - x37); break;
          case 22: pool.push_back(tanh(matmul(randn({3, 37, 37}, device(), t), pool[3].t()).transpose(1, 2)) + 1.0); break;
          default: pool.push_back(sigmoid(x) * x); break;
        }
      } catch (const Error&) {
        // shapes that do not broadcast: the op records nothing, the graph goes on
      }
    }
    std::vector<Tensor> roots = {pool.back()};
    for (int k = 0; k < 2; ++k) roots.push_back(pool[pick(pool.size())]);
    std::vector<Tensor> pending;
    for (const Tensor& t : roots)
      if (!t.impl().node->is_data()) pending.push_back(t);
    if (pending.empty()) continue;
    PlanStats stats = expect_plan_matches_reference(pending, "graph " + std::to_string(gi));
    fused_groups += stats.fused_groups;
    fused_ops += stats.fused_ops;
    row_groups += stats.row_groups;
    gemm_epilogues += stats.gemm_epilogues;
    if (::testing::Test::HasFailure()) break;  // the first failing graph is the useful one
  }
  // The graphs exercise fusion, not only single ops.
  EXPECT_GT(fused_groups, graphs / 2);
  EXPECT_GT(fused_ops, 2 * fused_groups);
  EXPECT_GT(row_groups, graphs / 4);
  // bf16 products run on bf16 kernels that write their whole result: no tiled epilogue.
  if (t == bf16) EXPECT_EQ(gemm_epilogues, 0);
  else EXPECT_GT(gemm_epilogues, graphs / 8);
  // Groups run in the row loop, bf16 ones too (their casts have bound forms).
  const std::int64_t row_loops = metrics::counter("RowLoopGroups") - row_loops_before,
                     tile_views = metrics::counter("TileViewGroups") - tile_views_before;
  EXPECT_GT(row_loops, graphs / 2);
  if (on_views) EXPECT_EQ(row_loops, tile_views) << "every group ran a member on views";
  else EXPECT_GT(row_loops, 4 * tile_views);
  std::printf("%s random graphs from seed %llu: %d fused groups holding %d ops, %d of them around reductions, %d on "
              "products; groups run: %lld in the row loop, %lld on tiles\n",
              std::string(name(t)).c_str(), static_cast<unsigned long long>(seed), fused_groups, fused_ops, row_groups, gemm_epilogues,
              static_cast<long long>(row_loops), static_cast<long long>(tile_views));
}

TEST(Plan, RandomGraphsMatchTheReferenceExecutor) { random_graphs_match_reference(f32, 2000); }

/// Every member run by its op's kernel on views of each tile, as a member with no bound form
/// for its operands runs, in groups of every kind: the same bits.
TEST(Plan, RandomGraphsOfMembersOnViewsMatchTheReferenceExecutor) {
  struct OnViews {
    OnViews() { detail::members_on_views = true; }
    ~OnViews() { detail::members_on_views = false; }
  } on_views;  // each graph's plan is made afresh, its loops bound while it is set
  random_graphs_match_reference(f32, 300, true);
  random_graphs_match_reference(bf16, 100, true);
}

TEST(Plan, RandomBf16GraphsMatchTheReferenceExecutor) { random_graphs_match_reference(bf16, 400); }

}  // namespace
}  // namespace lt
