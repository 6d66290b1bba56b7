// The plan cache: a shape-static loop compiles each distinct graph once; values (data,
// scalars, seeds) never recompile; a changed shape compiles once and says where; a cached plan
// is checked against the graph before it runs; expect_cached forbids compiles.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <lazytensor/lazytensor.hpp>
#include <lazytensor/runtime/barrier.hpp>  // the runtime's internals, tested here

namespace lt {
namespace {

std::int64_t uncached() { return metrics::counter("UncachedCompile"); }
std::int64_t cached() { return metrics::counter("CachedCompile"); }

class PlanCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    wait_device_ops();
    plan_cache().clear();
    metrics::reset();
  }
};

/// One step of a small training-like loop: w -= lr * grad of a least-squares fit, written out.
struct LinearFitStep {
  Tensor x, y, w;
  float lr;
  void operator()() {
    Tensor err = x.matmul(w) - y;                        // [n, 1]
    Tensor grad = x.t().matmul(err) * (2.0f / static_cast<float>(x.size(0)));
    w = w - grad * lr;
    sync();
  }
};

TEST_F(PlanCacheTest, AShapeStaticLoopCompilesOnceAndThenHitsEveryStep) {
  auto dev = device();
  manual_seed(1);
  LinearFitStep step{randn({32, 4}, dev), randn({32, 1}, dev), zeros({4, 1}, dev), 0.05f};
  sync();  // the inputs: one graph of its own
  const std::int64_t first = uncached();
  constexpr int steps = 20;
  for (int k = 0; k < steps; ++k) {
    std::int64_t before = cached();
    step();
    wait_device_ops();
    EXPECT_EQ(cached() - before, k == 0 ? 0 : 1) << "step " << k;
  }
  EXPECT_EQ(uncached() - first, 1);  // one distinct graph: the step
  EXPECT_EQ(metrics::counter("CacheCollision"), 0);

  // The result is what the same loop computes on the eager device.
  Tensor x = step.x.cpu(), y = step.y.cpu(), w = zeros({4, 1});
  for (int k = 0; k < steps; ++k) w = w - x.t().matmul(x.matmul(w) - y) * (2.0f / 32.0f) * 0.05f;
  std::vector<float> lazy = step.w.to_vector<float>(), eager = w.to_vector<float>();
  for (std::size_t i = 0; i < lazy.size(); ++i) EXPECT_NEAR(lazy[i], eager[i], 1e-5f) << i;
}

TEST_F(PlanCacheTest, ChangingValuesAndScalarsCompilesNothing) {
  auto dev = device();
  auto run = [&](std::vector<float> values, float lr) {
    Tensor a = from_vector(values, {4}, dev);
    Tensor out = (a * lr + 3.0f).relu() - a * a;
    sync();
    return out.to_vector<float>();
  };
  run({1, 2, 3, 4}, 0.25f);
  const std::int64_t compiled = uncached();
  float lrs[] = {0.5f, 0.125f, -2.0f, 1e-3f, 7.0f};
  for (float lr : lrs) {
    std::vector<float> in{lr, -1.0f, 2.5f, 0.0f};
    std::vector<float> got = run(in, lr);
    for (std::size_t i = 0; i < in.size(); ++i)
      EXPECT_FLOAT_EQ(got[i], std::max(in[i] * lr + 3.0f, 0.0f) - in[i] * in[i]) << "lr " << lr;
  }
  EXPECT_EQ(uncached(), compiled) << "a new value or scalar compiled a graph";
}

TEST_F(PlanCacheTest, ScalarsZeroAndOneAreFoldedIntoTheKey) {
  auto dev = device();
  Tensor a = ones({8}, dev);
  sync();
  auto scaled = [&](float s) {
    Tensor y = a * s;
    sync();
    return y.to_vector<float>()[0];
  };
  EXPECT_EQ(scaled(3.0f), 3.0f);
  std::int64_t after_other = uncached();
  EXPECT_EQ(scaled(5.0f), 5.0f);
  EXPECT_EQ(uncached(), after_other);  // another value: the same plan
  EXPECT_EQ(scaled(1.0f), 1.0f);
  EXPECT_EQ(uncached(), after_other + 1);  // 1 is a constant of its own graph
  EXPECT_EQ(scaled(0.0f), 0.0f);
  EXPECT_EQ(uncached(), after_other + 2);
}

TEST_F(PlanCacheTest, RandomOpsDrawAnewWithoutRecompiling) {
  auto dev = device();
  manual_seed(7);
  std::vector<std::vector<float>> draws;
  std::int64_t compiled = 0;
  for (int k = 0; k < 4; ++k) {
    Tensor r = rand({16}, dev) + randn({16}, dev);
    sync();
    draws.push_back(r.to_vector<float>());
    if (k == 0) compiled = uncached();
  }
  EXPECT_EQ(uncached(), compiled);
  EXPECT_NE(draws[0], draws[1]);
  EXPECT_NE(draws[1], draws[2]);
}

TEST_F(PlanCacheTest, AChangedShapeCompilesOnceAndTheReasonNamesTheNodeAndShape) {
  auto dev = device();
  debug::explain_compiles(true);
  Tensor w = ones({784, 16}, dev);
  sync();
  auto forward = [&](std::int64_t batch) {
    Tensor x = ones({batch, 784}, dev);
    Tensor h = x.matmul(w).relu();
    sync();
    return h;
  };
  forward(64);
  forward(64);
  const std::int64_t before = uncached();
  forward(32);
  EXPECT_EQ(uncached(), before + 1);
  std::string why = debug::last_compile_reason();
  EXPECT_NE(why.find("[32, 784]"), std::string::npos) << why;
  EXPECT_NE(why.find("[64, 784]"), std::string::npos) << why;
  EXPECT_NE(why.find("full"), std::string::npos) << why;    // the node that changed
  EXPECT_NE(why.find("matmul"), std::string::npos) << why;  // and what reads it
  forward(32);
  EXPECT_EQ(uncached(), before + 1);
  debug::explain_compiles(false);
}

TEST_F(PlanCacheTest, ExpectCachedRaisesOnACompileAndTakesNothing) {
  auto dev = device();
  Tensor a = full({3}, 2.0f, dev);
  sync();
  auto step = [&](float s) {
    Tensor b = a * s + 1.0f;
    sync();
    return b;
  };
  step(3.0f);
  Tensor c;
  {
    expect_cached guard;
    EXPECT_EQ(step(4.0f).to_vector<float>(), std::vector<float>(3, 9.0f));  // cached: fine
    c = a.exp();  // a graph not seen before
    try {
      sync();
      FAIL() << "expect_cached let a graph compile";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("expect_cached"), std::string::npos) << e.what();
    }
    EXPECT_FALSE(c.impl().node->is_data());  // still pending
  }
  const std::int64_t before = uncached();
  sync();  // outside the scope it compiles and runs
  wait_device_ops();
  EXPECT_EQ(uncached(), before + 1);
  EXPECT_FLOAT_EQ(c.to_vector<float>()[0], std::exp(2.0f));
}

TEST_F(PlanCacheTest, APlanUnderAnotherGraphsKeyIsCaughtNotRun) {
  auto dev = device();
  Tensor a = full({4}, 3.0f, dev), b = full({4}, 5.0f, dev);
  sync();
  const std::int64_t before = uncached();
  // A plan for a * b filed under the key of a + b: as if the two graphs' keys collided.
  Tensor sum = a + b, product = a * b;
  Schedule sum_graph = make_schedule(std::vector<NodePtr>{sum.impl().node});
  auto wrong = std::make_shared<Plan>(make_plan(std::vector<NodePtr>{product.impl().node}));
  wrong->key = sum_graph.key;
  plan_cache().insert(wrong);
  product = Tensor();  // only the sum is pending
  sync();
  EXPECT_EQ(sum.to_vector<float>(), std::vector<float>(4, 8.0f));
  EXPECT_EQ(metrics::counter("CacheCollision"), 1);
  EXPECT_EQ(uncached(), before + 1);
}

// The same op, with attributes of another structure: multiplying by 0 is folded, by 0.5 is not.
// The plan keeps the attributes it was compiled with; their ints are alike (a float scalar
// keeps its integer part) but their floats differ, so the check walks them.
TEST_F(PlanCacheTest, APlanForAnotherScalarClassUnderTheKeyIsCaughtNotRun) {
  Tensor a = full({4}, 3.0f, device());
  sync();
  const std::int64_t before = uncached();
  Tensor by_zero = a * 0.0f, by_half = a * 0.5f;
  ASSERT_EQ(by_zero.impl().node->op, by_half.impl().node->op) << "one fragment op, two scalar classes";
  Schedule zero_graph = make_schedule(std::vector<NodePtr>{by_zero.impl().node});
  auto wrong = std::make_shared<Plan>(make_plan(std::vector<NodePtr>{by_half.impl().node}));
  wrong->key = zero_graph.key;
  plan_cache().insert(wrong);
  by_half = Tensor();
  sync();
  EXPECT_EQ(by_zero.to_vector<float>(), std::vector<float>(4, 0.0f));
  EXPECT_EQ(metrics::counter("CacheCollision"), 1);
  EXPECT_EQ(uncached(), before + 1);
  // The plan compiled for it now serves the same graph, with its attributes bit for bit.
  Tensor again = a * 0.0f;
  sync();
  EXPECT_EQ(again.to_vector<float>(), std::vector<float>(4, 0.0f));
  EXPECT_EQ(metrics::counter("CacheCollision"), 1);
  EXPECT_EQ(uncached(), before + 1);
}

TEST_F(PlanCacheTest, LeastRecentlyUsedPlansLeaveFirstAndStayValidWhileHeld) {
  PlanCache cache(2);
  auto plan = [](hash_t key) {
    auto p = std::make_shared<Plan>();
    p->key = key;
    return p;
  };
  cache.insert(plan(1));
  cache.insert(plan(2));
  std::shared_ptr<const Plan> held = cache.find(1);  // 1 is now the most recent
  cache.insert(plan(3));                             // evicts 2
  EXPECT_NE(cache.find(1), nullptr);
  EXPECT_EQ(cache.find(2), nullptr);
  EXPECT_NE(cache.find(3), nullptr);
  cache.insert(plan(4));  // evicts 1: the caller's copy lives on
  EXPECT_EQ(cache.find(1), nullptr);
  ASSERT_NE(held, nullptr);
  EXPECT_EQ(held->key, 1u);
  EXPECT_EQ(cache.size(), 2u);
  PlanCache none(0);
  none.insert(plan(5));
  EXPECT_EQ(none.find(5), nullptr);
}

TEST_F(PlanCacheTest, AGraphEvictedWhileQueuedStillRunsAndTheTraceTimeIsKept) {
  auto dev = device();
  Tensor a = arange(0, 6, 1, dev).to(f32);
  sync();
  for (int k = 0; k < 3; ++k) {
    a = a * 2.0f;
    sync();
    plan_cache().clear();  // the queued step holds its plan
  }
  EXPECT_EQ(a.to_vector<float>(), (std::vector<float>{0, 8, 16, 24, 32, 40}));
  EXPECT_GE(metrics::timer("TraceTime").count, 3);
}

TEST_F(PlanCacheTest, TimeSpentWaitingForTheDeviceIsNotTracingTime) {
  // Each step is a few traced ops and a lot of work, and the program reads its result at
  // once: the loop waits on the device, it is not tracing-bound.
  auto dev = device();
  Tensor w = randn({192, 192}, dev) * 0.05f, x = randn({192, 192}, dev);
  sync();
  auto run_steps = [&](int steps) {
    for (int step = 0; step < steps; ++step) {
      Tensor y = x.matmul(w).matmul(w).matmul(w).matmul(w);
      sync();
      y.to_vector<float>();
    }
  };
  // The device's window of steps may have begun in earlier code: one window of these steps
  // first, so that every window judged below holds only them.
  run_steps(detail::TraceClock::window_steps);
  std::int64_t bound = metrics::counter("TracingBoundWindows");
  double traced = metrics::timer("TraceTime").total, executed = metrics::timer("ExecuteTime").total;
  run_steps(2 * detail::TraceClock::window_steps);
  EXPECT_EQ(metrics::counter("TracingBoundWindows"), bound);
  EXPECT_LT(metrics::timer("TraceTime").total - traced, metrics::timer("ExecuteTime").total - executed);
}

}  // namespace
}  // namespace lt
