// Autocast's cast cache: repeated steps on unchanged device data reuse its casts (counted, and
// the graph has no cast left); a changed value (an optimizer step, an in-place op, another
// tensor) is cast afresh, with the bits of a run without the cache; dropping the data frees its
// copy; casts a gradient flows through are never kept.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include <lazytensor/lazytensor.hpp>
#include <lazytensor/nn.hpp>
#include <lazytensor/optim.hpp>
#include <lazytensor/runtime/barrier.hpp>  // the plan cache, cleared here

namespace lt {
namespace {

std::int64_t hits() { return metrics::counter("AutocastCastCacheHits"); }
std::int64_t misses() { return metrics::counter("AutocastCastCacheMisses"); }

/// Bit-for-bit equality of two f32 results.
void expect_same_bits(const Tensor& got, const Tensor& want, const std::string& what) {
  const std::vector<float> g = got.to_vector<float>(), w = want.to_vector<float>();
  ASSERT_EQ(g.size(), w.size()) << what;
  EXPECT_EQ(std::memcmp(g.data(), w.data(), g.size() * sizeof(float)), 0) << what;
}

/// A small MLP's weights, each a device data leaf once synced.
struct Weights {
  Tensor w1, b1, w2, b2;
  explicit Weights(Device dev)
      : w1(randn({24, 16}, dev) * 0.3), b1(randn({24}, dev) * 0.1), w2(randn({5, 24}, dev) * 0.3),
        b2(randn({5}, dev) * 0.1) {}
};

/// The forward pass under autocast, computed (cache on or off).
Tensor forward(const Weights& m, const Tensor& x, bool cache) {
  autocast guard(bf16, true, cache);
  Tensor y = log_softmax(linear(relu(linear(x, m.w1, m.b1)), m.w2, m.b2), 1);
  sync();
  wait_device_ops();
  return y;
}

class AutocastCache : public ::testing::Test {
 protected:
  void SetUp() override {
    wait_device_ops();
    manual_seed(3);
  }
};

TEST_F(AutocastCache, RepeatedStepsOnUnchangedDataHitTheCache) {
  const Device dev = device();
  Weights m(dev);
  Tensor x = randn({8, 16}, dev);
  sync();
  wait_device_ops();
  const std::int64_t bytes0 = autocast_cache_bytes(), h0 = hits(), m0 = misses();
  const Tensor fresh = forward(m, x, false);
  EXPECT_EQ(hits(), h0);
  EXPECT_EQ(misses(), m0) << "cache_enabled = false keeps nothing";
  EXPECT_EQ(autocast_cache_bytes(), bytes0);

  const Tensor first = forward(m, x, true);
  EXPECT_EQ(misses(), m0 + 5) << "x and the four weights are cast once";
  EXPECT_EQ(hits(), h0);
  EXPECT_EQ(autocast_cache_bytes(), bytes0 + 2 * (x.numel() + 24 * 16 + 24 + 5 * 24 + 5));
  expect_same_bits(first, fresh, "the step that makes the casts");

  const std::int64_t compiled = metrics::counter("UncachedCompile");
  for (int step = 1; step <= 3; ++step) {
    {
      autocast guard(bf16);
      Tensor y = log_softmax(linear(relu(linear(x, m.w1, m.b1)), m.w2, m.b2), 1);
      const std::string ir = debug::ir_text({y});
      EXPECT_EQ(ir.find("device_data() f32"), std::string::npos) << "only the bf16 copies are read:\n" << ir;
      EXPECT_NE(ir.find("device_data() bf16[24, 16]"), std::string::npos) << ir;
      sync();
      wait_device_ops();
      expect_same_bits(y, fresh, "step " + std::to_string(step));
    }
    EXPECT_EQ(hits(), h0 + 5 * step);
    EXPECT_EQ(misses(), m0 + 5);
  }
  EXPECT_LE(metrics::counter("UncachedCompile"), compiled + 1) << "the steps that reuse the casts share one plan";
  EXPECT_EQ(autocast_cache_bytes(), bytes0 + 2 * (x.numel() + 24 * 16 + 24 + 5 * 24 + 5));
}

TEST_F(AutocastCache, ChangedWeightsAreCastAfresh) {
  const Device dev = device();
  Weights m(dev);
  Tensor x = randn({8, 16}, dev);
  // Trained weights: leaves that require grad, read under no_grad, as an evaluation does.
  for (Tensor* p : {&m.w1, &m.b1, &m.w2, &m.b2}) p->requires_grad_();
  sync();
  wait_device_ops();
  auto evaluate = [&](bool cache) {
    no_grad off;
    return forward(m, x, cache);
  };
  Tensor before = evaluate(true);
  before = evaluate(true);  // from the kept casts
  expect_same_bits(before, evaluate(false), "kept casts");

  // An optimizer step: every weight gets a new value.
  optim::SGD sgd({m.w1, m.b1, m.w2, m.b2}, optim::SGDOptions{0.5});
  {
    autocast guard(bf16);
    Tensor y = linear(relu(linear(x, m.w1, m.b1)), m.w2, m.b2);
    sum(y * y).backward();
  }
  sgd.step();
  sync();
  wait_device_ops();
  std::int64_t m0 = misses();
  Tensor after = evaluate(true);
  EXPECT_EQ(misses(), m0 + 4) << "the new values are cast again";
  expect_same_bits(after, evaluate(false), "after an optimizer step");
  after = evaluate(true);
  expect_same_bits(after, evaluate(false), "after an optimizer step, from the kept casts");
  EXPECT_NE(after.to_vector<float>(), before.to_vector<float>()) << "the step changed the result";

  // An in-place update of one weight.
  {
    no_grad off;
    m.w2.mul_(-1.5);
  }
  sync();
  wait_device_ops();
  m0 = misses();
  Tensor in_place = evaluate(true);
  EXPECT_EQ(misses(), m0 + 1) << "only w2 changed";
  expect_same_bits(in_place, evaluate(false), "after an in-place update");
  EXPECT_NE(in_place.to_vector<float>(), after.to_vector<float>());

  // Another tensor in the weight's place.
  m.b1 = randn({24}, dev);
  sync();
  wait_device_ops();
  m0 = misses();
  Tensor reassigned = evaluate(true);
  EXPECT_EQ(misses(), m0 + 1);
  expect_same_bits(reassigned, evaluate(false), "after a reassignment");
  EXPECT_NE(reassigned.to_vector<float>(), in_place.to_vector<float>());

  // A changed input, not synced yet: a lazy value, cast in the step itself and kept by none.
  m0 = misses();
  const std::int64_t h0 = hits();
  x = x * 2;
  Tensor lazy_input = evaluate(true);
  EXPECT_EQ(misses(), m0);
  EXPECT_EQ(hits(), h0 + 4);
  expect_same_bits(lazy_input, evaluate(false), "a pending input");
}

TEST_F(AutocastCache, DroppingTheDataFreesItsCopy) {
  const Device dev = device();
  const std::int64_t bytes0 = autocast_cache_bytes();
  Tensor x = randn({8, 16}, dev);
  {
    Weights m(dev);
    sync();
    wait_device_ops();
    Tensor y = forward(m, x, true);
    y = forward(m, x, true);
    EXPECT_EQ(autocast_cache_bytes(), bytes0 + 2 * (x.numel() + 24 * 16 + 24 + 5 * 24 + 5));
  }
  EXPECT_EQ(autocast_cache_bytes(), bytes0 + 2 * x.numel()) << "the weights' copies went with them";
  x = Tensor();
  EXPECT_EQ(autocast_cache_bytes(), bytes0);

  // Dropped before the step that computes the copy ran: it goes at that step.
  {
    Tensor w = randn({6, 16}, dev), v = randn({3, 16}, dev);
    sync();
    wait_device_ops();
    autocast guard(bf16);
    Tensor y = linear(v, w);
    EXPECT_EQ(autocast_cache_bytes(), bytes0 + 2 * (w.numel() + v.numel()));
  }
  sync();
  wait_device_ops();
  EXPECT_EQ(autocast_cache_bytes(), bytes0);
}

TEST_F(AutocastCache, CastsAGradientFlowsThroughAreNotKept) {
  const Device dev = device();
  Tensor x = randn({4, 8}, dev), w = Tensor(randn({3, 8}, dev)).requires_grad_();
  sync();
  wait_device_ops();
  const std::int64_t h0 = hits(), m0 = misses();
  for (int step = 0; step < 2; ++step) {
    autocast guard(bf16);
    w.mutable_grad() = {};
    Tensor loss = sum(matmul(x, w.t()));
    loss.backward();
    sync();
    wait_device_ops();
    // d sum(x w^T) / dw = the column sums of x (in bf16), for every row of w.
    const std::vector<float> g = w.grad().to_vector<float>(), xs = sum(x.to(bf16).to(f32), 0).to_vector<float>();
    for (std::size_t e = 0; e < g.size(); ++e) EXPECT_NEAR(g[e], xs[e % 8], 1e-4 + std::abs(xs[e % 8]) / 64) << e;
  }
  EXPECT_EQ(misses(), m0 + 1) << "x's cast is kept, w's is not";
  EXPECT_EQ(hits(), h0 + 1);
}

}  // namespace
}  // namespace lt
