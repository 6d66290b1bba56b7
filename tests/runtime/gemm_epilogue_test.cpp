// Products with an elementwise epilogue: a matmul or a conv2d and the elementwise ops over its
// full output run as one kernel, the ops on each tile of the product as it is computed. The
// product's value is made in full only when something outside the group reads it, and every
// result has the bits the reference executor gives.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <lazytensor/lazytensor.hpp>
#include <lazytensor/runtime/barrier.hpp>  // the runtime's internals, tested here

#include "plan_oracle.hpp"

namespace lt {
namespace {

using oracle::expect_plan_matches_reference;

TEST(GemmEpilogue, LinearBiasReluIsOneKernelWithNoIntermediates) {
  Tensor x = randn({64, 300}, device()), w = randn({200, 300}, device()), b = randn({200}, device());
  sync();
  Tensor y = relu(x.matmul(w.t()) + b);  // the epilogue as one fragment node
  PlanStats stats = debug::plan_stats({y});
  EXPECT_EQ(stats.kernels, 1);
  EXPECT_EQ(stats.gemm_epilogues, 1);
  EXPECT_EQ(stats.fused_ops, 2);
  EXPECT_EQ(stats.intermediate_bytes, 0);
  expect_plan_matches_reference({y}, "relu(x w^T + b)");

  // The same written op by op: three members on one product.
  Tensor mm = x.matmul(w.t());
  Tensor biased = mm + b;
  Tensor z = relu(biased);
  stats = debug::plan_stats({z});
  EXPECT_EQ(stats.kernels, 1);
  EXPECT_EQ(stats.fused_ops, 3);
  EXPECT_EQ(stats.intermediate_bytes, 0);
  expect_plan_matches_reference({z}, "op by op");

  // Against values computed here: relu of the row's dot products plus the bias.
  std::vector<float> vx = x.to_vector<float>(), vw = w.to_vector<float>(), vb = b.to_vector<float>(),
                     vy = y.to_vector<float>();
  for (int i = 0; i < 64; i += 7)
    for (int j = 0; j < 200; j += 13) {
      double dot = vb[static_cast<std::size_t>(j)];
      for (int k = 0; k < 300; ++k) dot += double(vx[static_cast<std::size_t>(i * 300 + k)]) * vw[static_cast<std::size_t>(j * 300 + k)];
      EXPECT_NEAR(vy[static_cast<std::size_t>(i * 200 + j)], std::max(dot, 0.0), 1e-4 * (1 + std::abs(dot))) << i << ", " << j;
    }
}

TEST(GemmEpilogue, ResidualAndActivations) {
  Tensor x = randn({48, 96}, device()), w = randn({96, 96}, device()), b = randn({96}, device());
  Tensor r = randn({48, 96}, device());
  sync();
  // A residual of the product's shape, and a gelu after it.
  Tensor y = gelu(x.matmul(w) + b) + r;
  PlanStats stats = debug::plan_stats({y});
  EXPECT_EQ(stats.kernels, 1);
  EXPECT_EQ(stats.intermediate_bytes, 0);
  expect_plan_matches_reference({y}, "gelu(x w + b) + r");
  // A residual computed within the step and read first: its group runs before the product.
  Tensor r2 = r * 2.0f + 1.0f;
  Tensor h = x.matmul(w), y2 = r2 + relu(h + b);
  stats = debug::plan_stats({y2});
  EXPECT_EQ(stats.gemm_epilogues, 1);
  EXPECT_EQ(stats.kernels, 2);
  expect_plan_matches_reference({y2}, "residual made in the step");
  // Read after the product, it comes later in the step's order: the product is made in full.
  Tensor h2 = x.matmul(w), y3 = relu(h2 + b) + r2;
  stats = debug::plan_stats({y3});
  EXPECT_EQ(stats.intermediate_bytes, 48 * 96 * 4);
  expect_plan_matches_reference({y3}, "residual after the product");
  // Ops that change the dtype, a where with a scalar, and a sigmoid.
  Tensor h3 = x.matmul(w);
  Tensor positive = h3 > 0.0f;
  Tensor leaky = where(positive, h3, h3 * 0.01f);
  Tensor gate = sigmoid(h3) * leaky;
  stats = debug::plan_stats({gate, positive});
  EXPECT_EQ(stats.kernels, 1);
  EXPECT_EQ(stats.intermediate_bytes, 0);
  expect_plan_matches_reference({gate, positive}, "dtype changes");
}

TEST(GemmEpilogue, TransposedAndBroadcastEpilogueInputs) {
  Tensor x = randn({40, 50}, device()), w = randn({50, 60}, device()), xt = randn({50, 40}, device());
  Tensor rt = randn({60, 40}, device()), col = randn({40, 1}, device()), row = randn({1, 60}, device());
  Tensor strided = randn({40, 120}, device());
  sync();
  // Views kept as device data: a transposed [40, 60] and every other column of [40, 120].
  Tensor transposed = rt.t(), every_other = strided.slice(1, 0, std::nullopt, 2);
  sync();
  Tensor mm = x.matmul(w);
  Tensor y = (mm + transposed) * col - row;  // a transposed residual, a column and a row broadcast
  PlanStats stats = debug::plan_stats({y});
  EXPECT_EQ(stats.kernels, 1);
  EXPECT_EQ(stats.intermediate_bytes, 0);
  expect_plan_matches_reference({y}, "transposed and broadcast");
  Tensor mm2 = x.matmul(w);
  Tensor y2 = mm2 * every_other + 3.0f;
  stats = debug::plan_stats({y2});
  EXPECT_EQ(stats.kernels, 1);
  expect_plan_matches_reference({y2}, "strided residual");
  // Views taken in the step: the walk places views before computed inputs, so the product's
  // group can read them.
  Tensor mm3 = xt.t().matmul(w);
  Tensor y3 = tanh(mm3) - rt.t();
  stats = debug::plan_stats({y3});
  EXPECT_EQ(stats.views, 2);
  EXPECT_EQ(stats.kernels, 1);
  EXPECT_EQ(stats.intermediate_bytes, 0);
  expect_plan_matches_reference({y3}, "views in the step");
}

TEST(GemmEpilogue, ConvolutionsRunTheirBiasAndActivationOnEachImage) {
  // Padding, stride, groups and f64: each image's output is one tile, its epilogue run on it.
  struct Case {
    Shape x, w;
    Pair2 stride, padding;
    std::int64_t groups;
    DType dtype;
  };
  for (const Case& c : {Case{{4, 6, 9, 9}, {8, 6, 3, 3}, 1, 1, 1, f32}, Case{{3, 4, 11, 10}, {6, 2, 3, 2}, 2, {1, 0}, 2, f32},
                        Case{{2, 3, 7, 7}, {5, 3, 5, 5}, 1, 0, 1, f64}}) {
    Tensor x = randn(c.x, device(), c.dtype), w = randn(c.w, device(), c.dtype), b = randn({c.w[0]}, device(), c.dtype);
    sync();
    const std::string what = "conv of " + c.x.str() + " by " + c.w.str();
    Tensor y = relu(conv2d(x, w, b, c.stride, c.padding, 1, c.groups));
    PlanStats stats = debug::plan_stats({y});
    EXPECT_EQ(stats.kernels, 1) << what;
    EXPECT_EQ(stats.gemm_epilogues, 1) << what;
    EXPECT_EQ(stats.intermediate_bytes, 0) << what;
    expect_plan_matches_reference({y}, what);
    // The convolution's own value read as well: made in full, its epilogue reading it there.
    Tensor z = conv2d(x, w, std::nullopt, c.stride, c.padding, 1, c.groups), s = z * 2.0f + b.reshape({-1, 1, 1});
    expect_plan_matches_reference({s, z}, what + ", kept");
  }
}

TEST(GemmEpilogue, BatchedProducts) {
  Tensor a = randn({3, 20, 30}, device()), b = randn({3, 30, 40}, device()), w = randn({30, 40}, device());
  Tensor bias = randn({40}, device()), per_batch = randn({3, 1, 40}, device()), v = randn({30}, device());
  sync();
  Tensor y = relu(a.matmul(b) + bias);
  PlanStats stats = debug::plan_stats({y});
  EXPECT_EQ(stats.kernels, 1);
  EXPECT_EQ(stats.intermediate_bytes, 0);
  expect_plan_matches_reference({y}, "batched");
  Tensor mm = a.matmul(w);  // one weight for every batch
  Tensor y2 = mm * per_batch + bias;
  expect_plan_matches_reference({y2}, "broadcast weight");
  Tensor y3 = exp(v.matmul(b).clamp(-3, 3)) + bias;  // a vector times a batch: [3, 40]
  expect_plan_matches_reference({y3}, "vector times batch");
  Tensor y4 = sigmoid(b.transpose(1, 2).matmul(v)) * 2.0f;  // a batch times a vector: [3, 40]
  expect_plan_matches_reference({y4}, "batch times vector");
}

TEST(GemmEpilogue, OneValuePerOutputRow) {
  // A value per output row (a column vector, one per batch and row, a strided view of one),
  // in tiles cut both ways.
  Tensor a = randn({2, 300, 77}, device()), b = randn({77, 520}, device());
  Tensor per_row = randn({300, 1}, device()), per_batch_row = randn({2, 300, 1}, device()), wide = randn({1, 600}, device());
  sync();
  Tensor strided_column = wide.slice(1, 0, std::nullopt, 2).t();  // [300, 1], every other value
  sync();
  Tensor y = (a.matmul(b) + per_row) * per_batch_row - strided_column;
  PlanStats stats = debug::plan_stats({y});
  EXPECT_EQ(stats.kernels, 1);
  EXPECT_EQ(stats.intermediate_bytes, 0);
  expect_plan_matches_reference({y}, "per-row operands");
  // A convolution's bias per output channel, the channel dim followed by pixels.
  Tensor x = randn({3, 4, 20, 20}, device()), w = randn({6, 4, 3, 3}, device()), bias = randn({6}, device());
  sync();
  Tensor z = tanh(conv2d(x, w, bias, 1, 1)) * bias.reshape({6, 1, 1});
  expect_plan_matches_reference({z}, "a bias per channel");
}

TEST(GemmEpilogue, ProductsCutIntoManyTilesWithRaggedEdges) {
  // Cut both ways, with edges that are not whole tiles: blocks that are not whole output rows.
  struct Case { std::int64_t n, k, m; };
  for (Case c : {Case{300, 77, 520}, Case{129, 257, 130}, Case{64, 784, 1024}, Case{1, 33, 1000}, Case{1000, 33, 1}}) {
    Tensor x = randn({c.n, c.k}, device()), w = randn({c.m, c.k}, device()), b = randn({c.m}, device());
    Tensor r = randn({c.n, c.m}, device());
    sync();
    Tensor y = relu(linear(x, w, b)) * r;
    PlanStats stats = debug::plan_stats({y});
    EXPECT_EQ(stats.kernels, 1);
    EXPECT_EQ(stats.intermediate_bytes, 0);
    expect_plan_matches_reference({y}, std::to_string(c.n) + "x" + std::to_string(c.k) + "x" + std::to_string(c.m));
  }
}

TEST(GemmEpilogue, AProductReadOutsideItsGroupIsMadeInFull) {
  Tensor x = randn({200, 64}, device()), w = randn({64, 300}, device()), b = randn({300}, device());
  sync();
  Tensor mm = x.matmul(w);
  Tensor y = relu(mm + b);
  // The product is a result too: made in full, and the epilogue reads its tiles there.
  PlanStats stats = debug::plan_stats({y, mm});
  EXPECT_EQ(stats.kernels, 1);
  EXPECT_EQ(stats.intermediate_bytes, 0);
  expect_plan_matches_reference({y, mm}, "product kept");
  // Read by a reduction outside the group: made in full, counted as an intermediate.
  Tensor total = sum(mm, 1);
  stats = debug::plan_stats({y, total});
  EXPECT_EQ(stats.kernels, 2);
  EXPECT_EQ(stats.intermediate_bytes, 200 * 300 * 4);
  expect_plan_matches_reference({y, total}, "product read by a sum");
  // An epilogue member read outside the group, by the next product.
  Tensor h = relu(mm + b), out = relu(h.matmul(w.t()) + 1.0f);
  stats = debug::plan_stats({out});
  EXPECT_EQ(stats.kernels, 2);
  EXPECT_EQ(stats.gemm_epilogues, 2);
  EXPECT_EQ(stats.intermediate_bytes, 200 * 300 * 4);
  expect_plan_matches_reference({out}, "two layers");
}

TEST(GemmEpilogue, OtherDtypes) {
  Tensor x = randn({30, 20}, device(), f64), w = randn({20, 25}, device(), f64), b = randn({25}, device(), f64);
  Tensor i = randint(-5, 5, {30, 20}, device()), j = randint(-5, 5, {20, 25}, device());
  Tensor i32a = randint(-5, 5, {30, 20}, device(), i32), i32b = randint(-5, 5, {20, 25}, device(), i32);
  sync();
  Tensor y = relu(x.matmul(w) + b);
  EXPECT_EQ(debug::plan_stats({y}).gemm_epilogues, 1);
  expect_plan_matches_reference({y}, "f64");
  Tensor yi = i.matmul(j) * 3 + 1;
  EXPECT_EQ(debug::plan_stats({yi}).gemm_epilogues, 1);
  expect_plan_matches_reference({yi}, "i64");
  // Products of i32 are computed in i64 and narrowed: they run alone.
  Tensor y32 = i32a.matmul(i32b) + 1;
  EXPECT_EQ(debug::plan_stats({y32}).gemm_epilogues, 0);
  expect_plan_matches_reference({y32}, "i32");
}

TEST(GemmEpilogue, MlpLayersAreOneKernelEach) {
  Tensor x = randn({64, 784}, device());
  Tensor w1 = randn({1024, 784}, device()) * 0.03f, b1 = randn({1024}, device());
  Tensor w2 = randn({1024, 1024}, device()) * 0.03f, b2 = randn({1024}, device());
  Tensor w3 = randn({10, 1024}, device()) * 0.03f, b3 = randn({10}, device());
  sync();
  Tensor h1 = relu(linear(x, w1, b1));
  Tensor h2 = relu(linear(h1, w2, b2));
  Tensor y = log_softmax(linear(h2, w3, b3), 1);
  PlanStats stats = debug::plan_stats({y});
  // Three products with their epilogues, and log_softmax as one row group.
  EXPECT_EQ(stats.gemm_epilogues, 3);
  EXPECT_EQ(stats.row_groups, 1);
  EXPECT_EQ(stats.kernels, 4);
  EXPECT_EQ(stats.intermediate_bytes, (64 * 1024 * 2 + 64 * 10) * 4);
  expect_plan_matches_reference({y}, "W3");
}

TEST(GemmEpilogue, PlansSurviveSerialisationAndRejectForgedGroups) {
  Tensor x = randn({64, 100}, device()), w = randn({80, 100}, device()), b = randn({80}, device());
  sync();
  Tensor y = relu(linear(x, w, b)) * 0.5f;
  std::vector<Tensor> ts = {y};
  std::vector<NodePtr> roots = oracle::roots_of(ts);
  Schedule schedule = make_schedule(roots);
  Plan plan = make_plan(schedule);
  ASSERT_EQ(plan.stats.gemm_epilogues, 1);
  Plan back = deserialize_plan(serialize_plan(plan));
  EXPECT_EQ(back.stats.gemm_epilogues, 1);
  EXPECT_EQ(serialize_plan(back), serialize_plan(plan));
  oracle::expect_same_bits_as_reference(back, schedule, ts, "deserialised");

  auto group_of_product = [](Plan& p) -> FusionGroup& {
    return *std::find_if(p.groups.begin(), p.groups.end(), [](const FusionGroup& g) { return g.kind == GroupKind::product; });
  };
  Plan forged = plan;  // a product that is not the first member
  std::swap(group_of_product(forged).members[0].role, group_of_product(forged).members[1].role);
  EXPECT_THROW(deserialize_plan(serialize_plan(forged)), Error);
  forged = plan;  // an elementwise op posing as the product
  std::swap(group_of_product(forged).members[0].position, group_of_product(forged).members[1].position);
  EXPECT_THROW(deserialize_plan(serialize_plan(forged)), Error);
  forged = plan;  // the product read over the output's index space
  FusionGroup& g = group_of_product(forged);
  g.externals[static_cast<std::size_t>(-1 - g.members[0].inputs[0])].index_space = g.shape;
  EXPECT_THROW(deserialize_plan(serialize_plan(forged)), Error);
  forged = plan;  // a group around a reduction cannot hold a product
  group_of_product(forged).reduced_from = 1;
  EXPECT_THROW(deserialize_plan(serialize_plan(forged)), Error);
  forged = plan;  // a product leading a group of a kind that has no leader
  group_of_product(forged).kind = GroupKind::map;
  EXPECT_THROW(deserialize_plan(serialize_plan(forged)), Error);
  forged = plan;  // a kind past the known ones
  group_of_product(forged).kind = static_cast<GroupKind>(group_kinds.size());
  EXPECT_THROW(deserialize_plan(serialize_plan(forged)), Error);
}

/// bf16 ops on a product's output run as they do in any other group: each op, recorded as
/// casts around its f32 form, makes one pass over the tile on its bf16 values.
TEST(GemmEpilogue, ABf16ChainRunsInOnePassPerOpOnTheProductsTiles) {
  Tensor x = randn({96, 200}, device()), w = randn({200, 300}, device()), r = randn({96, 300}, device(), bf16);
  sync();
  // The product narrowed on its tiles, then three ops on bf16 tensors, each recorded as casts
  // around its f32 form: one kernel, no value made in full but the result.
  Tensor y = relu(x.matmul(w).to(bf16) + r) * 0.5f;
  PlanStats stats = debug::plan_stats({y});
  EXPECT_EQ(stats.kernels, 1);
  EXPECT_EQ(stats.gemm_epilogues, 1);
  EXPECT_EQ(stats.intermediate_bytes, 0);
  const std::int64_t one_pass_before = metrics::counter("RowLoopBf16Ops");
  expect_plan_matches_reference({y}, "a bf16 chain on a product");
  // The add, the relu and the multiplication each ran on bf16 values in one pass.
  EXPECT_GE(metrics::counter("RowLoopBf16Ops") - one_pass_before, 3);
  // Against a plain loop: each op rounded to bf16 once.
  std::vector<float> vx = x.to_vector<float>(), vw = w.to_vector<float>(), vr = Tensor(r.to(f32)).to_vector<float>(),
                     vy = Tensor(y.to(f32)).to_vector<float>();
  auto round = [](double v) { return static_cast<double>(static_cast<float>(bfloat16(static_cast<float>(v)))); };
  for (int i = 0; i < 96; i += 11)
    for (int j = 0; j < 300; j += 17) {
      double dot = 0;
      for (int k = 0; k < 200; ++k) dot += double(vx[static_cast<std::size_t>(i * 200 + k)]) * vw[static_cast<std::size_t>(k * 300 + j)];
      const double want = round(round(std::max(round(round(dot) + vr[static_cast<std::size_t>(i * 300 + j)]), 0.0)) * 0.5);
      EXPECT_NEAR(vy[static_cast<std::size_t>(i * 300 + j)], want, 0.02 * (1 + std::abs(want))) << i << ", " << j;
    }
}

TEST(GemmEpilogue, ACachedPlanReadsTheLiveGraphsScalars) {
  Tensor x = randn({32, 48}, device()), w = randn({48, 64}, device());
  sync();
  Tensor product = x.matmul(w);
  std::vector<float> mm = product.to_vector<float>();
  std::int64_t compiled = 0;
  for (float scale : {0.5f, 0.25f, 3.0f}) {
    Tensor y = relu(x.matmul(w)) * scale;  // the scalar is data: the plan is compiled once
    std::vector<float> got = y.to_vector<float>();
    if (scale == 0.5f) compiled = metrics::counter("UncachedCompile");
    EXPECT_EQ(metrics::counter("UncachedCompile"), compiled) << scale;
    for (std::size_t e = 0; e < mm.size(); ++e) ASSERT_EQ(got[e], std::max(mm[e], 0.0f) * scale) << scale << " at " << e;
  }
}

}  // namespace
}  // namespace lt
