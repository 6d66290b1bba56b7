// Tracing on the lazy device: nothing runs before the barrier, the barrier runs exactly the
// live pending values and cuts the graph, reads run what they need, transfers are counted.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <lazytensor/lazytensor.hpp>

#include "trace_helpers.hpp"

namespace lt {
namespace {

using testing_helpers::compute_nodes;
using testing_helpers::runs;

class Trace : public ::testing::Test {
 protected:
  // Values left pending by earlier tests run now, so that counters start from a clean step.
  void SetUp() override {
    sync();
    metrics::reset();
  }
};

TEST_F(Trace, OpsRunOnlyAtTheBarrier) {
  Tensor x = from_vector<float>({0.5f, -1.0f, 2.0f}, device());
  Tensor y = exp(x) * 2 + x;
  EXPECT_EQ(runs("exp"), 0);
  EXPECT_EQ(runs("mul"), 0);
  EXPECT_EQ(runs("add"), 0);
  EXPECT_EQ(runs("scalar"), 0);
  EXPECT_EQ(metrics::counter("MarkStep"), 0);
  sync();
  EXPECT_EQ(runs("exp"), 1);
  EXPECT_EQ(runs("mul"), 1);
  EXPECT_EQ(runs("add"), 1);
  EXPECT_EQ(runs("scalar"), 1);
  std::vector<float> v = y.to_vector<float>();
  EXPECT_FLOAT_EQ(v[0], std::exp(0.5f) * 2 + 0.5f);
  EXPECT_FLOAT_EQ(v[2], std::exp(2.0f) * 2 + 2.0f);
  EXPECT_EQ(runs("exp"), 1) << "reading a computed value runs nothing";
}

TEST_F(Trace, RandnPlusItselfIsExactlyTwiceIt) {
  auto a = lt::randn({2, 2}, lt::device());
  auto b = a + a;
  lt::sync();
  EXPECT_EQ(metrics::counter("MarkStep"), 1);
  EXPECT_EQ(runs("randn"), 1);
  std::vector<float> va = a.to_vector<float>(), vb = b.to_vector<float>();
  ASSERT_EQ(va.size(), 4u);
  for (std::size_t k = 0; k < va.size(); ++k) EXPECT_EQ(vb[k], 2 * va[k]) << k;
  EXPECT_EQ(metrics::counter("MarkStep"), 1) << "reads are not barriers";
  EXPECT_EQ(runs("randn"), 1) << "computed values are not computed again";
}

TEST_F(Trace, RandnReadBeforeTheBarrierStaysConsistent) {
  auto a = lt::randn({3}, lt::device());
  auto b = a + a;
  std::vector<float> vb = b.to_vector<float>();  // computes b alone; a is still pending
  lt::sync();
  std::vector<float> va = a.to_vector<float>();
  for (std::size_t k = 0; k < va.size(); ++k) EXPECT_EQ(vb[k], 2 * va[k]) << k;
}

TEST_F(Trace, TheBarrierCutsTheGraph) {
  Tensor x = from_vector<float>({1, 2, 3, 4}, {2, 2}, device());
  Tensor y = tanh(exp(x) - x);  // one fragment
  EXPECT_EQ(compute_nodes(debug::ir_text({y})), 1);
  sync();
  std::string cut = debug::ir_text({y});
  EXPECT_EQ(compute_nodes(cut), 0) << cut;
  EXPECT_NE(cut.find("%0 = device_data() f32[2, 2]"), std::string::npos) << cut;
  Tensor z = y * y;
  EXPECT_EQ(compute_nodes(debug::ir_text({z})), 1) << debug::ir_text({z});
}

TEST_F(Trace, TheGraphDoesNotGrowAcrossSteps) {
  std::vector<float> start = {0.0f, 1.0f, -3.0f, 100.0f};
  std::vector<float> want = start;
  Tensor x = from_vector(start, device());
  std::size_t ir_size = 0;
  for (int step = 0; step < 100; ++step) {
    x = x * 1.0001 + 0.0001;
    std::size_t size = debug::ir_text({x}).size();
    if (step == 0) ir_size = size;
    EXPECT_EQ(size, ir_size) << "step " << step;
    sync();
    EXPECT_EQ(compute_nodes(debug::ir_text({x})), 0);
    // The scalars are f64 C++ numbers, weakest in promotion: the step computes in f32.
    for (float& w : want) {
      float scaled = w * 1.0001f;
      w = scaled + 0.0001f;
    }
  }
  EXPECT_EQ(runs("mul"), 100) << "each step runs its own ops only";
  EXPECT_EQ(metrics::counter("MarkStep"), 100);
  std::vector<float> got = x.to_vector<float>();
  for (std::size_t k = 0; k < want.size(); ++k) EXPECT_FLOAT_EQ(got[k], want[k]) << k;
}

TEST_F(Trace, ReadingAValueRunsWhatItNeedsOnly) {
  Tensor x = from_vector<float>({0.25f, 0.5f, 0.75f, 1.0f}, {2, 2}, device());
  Tensor by_vector = exp(x), by_cpu = sin(x), by_print = cos(x), by_eigen = tanh(x);
  Tensor by_item = from_vector<float>({2.0f}, Shape{}, device()) * 3;

  EXPECT_FLOAT_EQ(by_vector.to_vector<float>()[1], std::exp(0.5f));
  EXPECT_EQ(runs("exp"), 1);
  EXPECT_EQ(runs("sin") + runs("cos") + runs("tanh") + runs("mul"), 0) << "other pending values stay pending";
  EXPECT_EQ(compute_nodes(debug::ir_text({by_vector})), 0) << "a read value is cut like at a barrier";

  Tensor on_cpu = by_cpu.cpu();
  EXPECT_EQ(runs("sin"), 1);
  EXPECT_EQ(on_cpu.device(), cpu);
  EXPECT_FLOAT_EQ(on_cpu.to_vector<float>()[3], std::sin(1.0f));

  std::ostringstream os;
  os << by_print;
  EXPECT_EQ(runs("cos"), 1);
  EXPECT_NE(os.str().find("0.9689"), std::string::npos) << os.str();  // cos(0.25)
  EXPECT_NE(os.str().find("f32[2, 2] on lazy:0"), std::string::npos) << os.str();

  auto m = to_eigen<float>(by_eigen);
  EXPECT_EQ(runs("tanh"), 1);
  ASSERT_EQ(m.rows(), 2);
  ASSERT_EQ(m.cols(), 2);
  EXPECT_FLOAT_EQ(m(1, 0), std::tanh(0.75f));

  EXPECT_EQ(by_item.item<float>(), 6.0f);
  EXPECT_EQ(runs("mul"), 1);
  EXPECT_EQ(metrics::counter("MarkStep"), 0) << "reads are not barriers";
}

TEST_F(Trace, IrTextAndDot) {
  Tensor x = from_vector<float>({1, 2, 3, 4}, {2, 2}, device());
  Tensor e = exp(x);  // recorded on its own, not fused into the add
  const std::string e_at = "trace/trace_test.cpp:" + std::to_string(__LINE__ - 1);
  Tensor y = e + x;
  const std::string y_at = "trace/trace_test.cpp:" + std::to_string(__LINE__ - 1);
  EXPECT_EQ(debug::ir_text({y}),
            "IR {\n"
            "  %0 = device_data() f32[2, 2]\n"
            "  %1 = exp(%0) f32[2, 2]  # " + e_at + "\n"
            "  %2 = add(%1, %0) f32[2, 2]  # " + y_at + "\n"
            "  ROOT 0 = %2\n"
            "}\n");
  std::string dot = debug::ir_dot({y});
  EXPECT_EQ(dot.rfind("digraph G {\n", 0), 0u) << dot;
  EXPECT_NE(dot.find("n1 [label=\"exp\\nf32[2, 2]\\n" + e_at + "\"];"), std::string::npos) << dot;
  EXPECT_NE(dot.find("n0 -> n1;"), std::string::npos) << dot;
  EXPECT_NE(dot.find("n1 -> n2;"), std::string::npos) << dot;
  EXPECT_NE(dot.find("n0 -> n2;"), std::string::npos) << dot;

  // Attributes and C++ scalars, and shared roots numbered once.
  Tensor gx = gelu(x, "tanh");
  Tensor g = gx * 2.5;
  std::string ir = debug::ir_text({g, y});
  EXPECT_NE(ir.find("= gelu(%0) {1} f32[2, 2]"), std::string::npos) << ir;
  // One op with a C++ scalar is one fragment node holding the scalar's value.
  EXPECT_NE(ir.find("= fragment{mul(%1, 2.5)} f32[2, 2]"), std::string::npos) << ir;
  EXPECT_NE(ir.find("ROOT 1 = %"), std::string::npos) << ir;
  EXPECT_EQ(std::count(ir.begin(), ir.end(), '\n'), 9) << ir;  // 5 nodes, 2 roots, braces
}

TEST_F(Trace, TransfersAreCounted) {
  Tensor host = from_vector<float>({1, 2, 3});
  Tensor on_device = host.to(device());
  EXPECT_EQ(metrics::counter("TransferToDevice"), 1);
  Tensor made_there = from_vector<float>({4, 5, 6}, device());
  EXPECT_EQ(metrics::counter("TransferToDevice"), 2);
  EXPECT_EQ(on_device.to(device()).impl_ptr(), on_device.impl_ptr()) << "no copy to the same device";
  EXPECT_EQ(metrics::counter("TransferToDevice"), 2);

  Tensor back = (on_device + made_there).cpu();
  EXPECT_EQ(metrics::counter("TransferFromDevice"), 1);
  EXPECT_EQ(back.to_vector<float>(), (std::vector<float>{5, 7, 9}));
  EXPECT_EQ(metrics::counter("TransferFromDevice"), 1) << "reading an eager tensor is no transfer";
  EXPECT_EQ(on_device.to_vector<float>(), (std::vector<float>{1, 2, 3}));
  EXPECT_EQ(metrics::counter("TransferFromDevice"), 2);

  // The device holds its own copy: later writes to the host array do not show through.
  host.impl().data.view.ptr<float>()[0] = 100;
  EXPECT_EQ(on_device.to_vector<float>()[0], 1.0f);
}

TEST_F(Trace, EagerTensorsComputeAtOnce) {
  Tensor x = from_vector<float>({1, 4, 9});
  Tensor y = sqrt(x) + 1;  // one fragment; its ops are counted as they run
  EXPECT_EQ(runs("sqrt"), 1);
  EXPECT_EQ(runs("add"), 1);
  EXPECT_EQ(y.to_vector<float>(), (std::vector<float>{2, 3, 4}));
  EXPECT_EQ(metrics::counter("MarkStep"), 0);
  EXPECT_EQ(metrics::counter("TransferFromDevice"), 0);
}

TEST_F(Trace, AssignAndCompoundAssignmentRebindEveryHandle) {
  for (Device dev : {cpu, device()}) {
    SCOPED_TRACE(dev.str());
    const std::int64_t adds = runs("add");
    Tensor x = from_vector<float>({1, 2}, dev);
    Tensor alias = x;
    x += 1.0;
    x *= x;
    x -= from_vector<float>({1, 1}, dev);
    if (dev.is_lazy()) {
      EXPECT_EQ(runs("add"), adds);
      sync();
    }
    EXPECT_EQ(alias.to_vector<float>(), (std::vector<float>{3, 8}));
    x.assign(from_vector<float>({7, 9}, dev) / 2);
    if (dev.is_lazy()) sync();
    EXPECT_EQ(alias.to_vector<float>(), (std::vector<float>{3.5f, 4.5f}));
  }
}

TEST_F(Trace, ATensorRebindTwiceInAStepIsComputedOnce) {
  Tensor x = from_vector<float>({1, 2}, device());
  x += 1.0;
  x += 1.0;
  sync();
  EXPECT_EQ(runs("add"), 2);
  EXPECT_EQ(x.to_vector<float>(), (std::vector<float>{3, 4}));
}

// `x = f(x)` where x is the only handle: x's state takes the new value itself. Where another
// handle shares the state, it keeps the old value, as with any assignment.
TEST_F(Trace, AssigningAnExpressionToTheOnlyHandleOfAStateReusesIt) {
  const std::vector<float> x0{1, -2}, y0{3, 5};
  Tensor x = from_vector<float>(x0, device());
  const Tensor y = from_vector<float>(y0, device());
  x = x * 2.0f;  // x held a device_data leaf: a new state holds the pending value
  const TensorImpl* state = &x.impl();
  for (int k = 0; k < 10; ++k) {
    x = x * 2.0f;
    x = x + y * 0.5f;  // two tensors: the node's inputs copy x's handle
    x = (x - 1.0f).relu() + x;
  }
  EXPECT_EQ(&x.impl(), state) << "no state is made while x alone holds it";
  Tensor before = x;
  x = x + 1.0f;
  EXPECT_NE(&x.impl(), state) << "a shared state is never rebound";
  Tensor squared = before * before;  // an expression kept: its handles are shares too
  auto kept = squared * 3.0f;
  squared = squared - 1.0f;
  sync();

  std::vector<float> expected(x0);
  for (std::size_t i = 0; i < expected.size(); ++i) {
    float v = expected[i] * 2.0f;
    for (int k = 0; k < 10; ++k) {
      v = v * 2.0f;
      v = v + y0[i] * 0.5f;
      v = std::max(v - 1.0f, 0.0f) + v;
    }
    expected[i] = v;
  }
  for (std::size_t i = 0; i < expected.size(); ++i) {
    EXPECT_FLOAT_EQ(before.to_vector<float>()[i], expected[i]);
    EXPECT_FLOAT_EQ(x.to_vector<float>()[i], expected[i] + 1.0f);
    EXPECT_FLOAT_EQ(squared.to_vector<float>()[i], expected[i] * expected[i] - 1.0f);
    EXPECT_FLOAT_EQ(Tensor(kept).to_vector<float>()[i], expected[i] * expected[i] * 3.0f);
  }
}

TEST_F(Trace, AssigningAnExpressionToATensorWithHistoryRecordsTheOp) {
  Tensor w = from_vector<float>({1, 2}, device());
  w.requires_grad_();
  Tensor x = w * 1.0f;
  for (int k = 0; k < 3; ++k) x = x * 2.0f;  // x = 8 w
  (x * x).sum().backward();
  sync();
  EXPECT_EQ(w.grad().to_vector<float>(), (std::vector<float>{128, 256}));
}

TEST_F(Trace, OnlyLiveTensorsAreComputed) {
  Tensor x = from_vector<float>({0.5f, 1.5f}, device());
  { Tensor dropped = exp(x); }
  (void)log(x);
  Tensor kept = sin(x);
  Tensor shared = cos(x);
  Tensor uses_shared = shared * shared, also_uses_shared = shared + 1;
  Tensor through_temporary = tanh(sqrt(x));
  sync();
  EXPECT_EQ(runs("exp"), 0);
  EXPECT_EQ(runs("log"), 0);
  EXPECT_EQ(runs("sin"), 1);
  EXPECT_EQ(runs("cos"), 1) << "a value two outputs share runs once";
  EXPECT_EQ(runs("sqrt"), 1) << "a dropped intermediate still runs for its reader";
  EXPECT_EQ(runs("tanh"), 1);
  EXPECT_FLOAT_EQ(uses_shared.to_vector<float>()[1], std::cos(1.5f) * std::cos(1.5f));
  EXPECT_FLOAT_EQ(through_temporary.to_vector<float>()[0], std::tanh(std::sqrt(0.5f)));
}

TEST_F(Trace, ThousandsOfDroppedTensorsLeaveOnlyTheLiveOnesPending) {
  Tensor x = from_vector<float>({0.5f, 1.5f}, device());
  std::vector<Tensor> kept;
  for (int k = 0; k < 5000; ++k) {
    Tensor dropped = exp(x) + static_cast<float>(k);
    if (k % 1000 == 0) kept.push_back(sin(dropped));
  }
  sync();
  EXPECT_EQ(runs("sin"), 5);
  EXPECT_EQ(runs("exp"), 5) << "only the exps the kept values read";
  for (int j = 0; j < 5; ++j)
    EXPECT_FLOAT_EQ(kept[static_cast<std::size_t>(j)].to_vector<float>()[1], std::sin(std::exp(1.5f) + 1000.0f * j));
}

// Tensors made and dropped on several threads while barriers take the device's pending
// tensors: a barrier takes a tensor only while a handle holds it, never one whose last handle
// is going (that would free it under the barrier), and the device stays sound.
TEST_F(Trace, TensorsDroppedOnOtherThreadsDuringBarriersAreNeverRevived) {
  Tensor x = from_vector<float>({0.25f, 2.0f}, device());
  sync();
  std::vector<std::thread> tracers;
  for (int t = 0; t < 3; ++t)
    tracers.emplace_back([&x] {
      for (int k = 0; k < 3000; ++k) (void)Tensor(x * static_cast<float>(k) + 1.0f);
    });
  for (int k = 0; k < 50; ++k) sync();
  for (std::thread& t : tracers) t.join();
  sync();
  Tensor kept = x * 3.0f + 1.0f;
  sync();
  EXPECT_FLOAT_EQ(kept.to_vector<float>()[1], 7.0f);
}

// One thread rebinds the states it alone holds without the pending list's lock; a barrier on
// another thread first makes every thread take the lock. Before, during and after that
// hand-over, values and reused states stay right, on the thread that owned the list and on
// the others.
TEST_F(Trace, ABarrierOnAnotherThreadTakesOverTheListFromTheThreadThatRebindsWithoutItsLock) {
  Tensor x = from_vector<float>({1.0f, -3.0f}, device());
  x = x * 2.0f;  // pending: the assignments below rebind x's own state
  const TensorImpl* state = &x.impl();
  for (int k = 0; k < 10; ++k) x = x * 2.0f;
  EXPECT_EQ(&x.impl(), state);
  std::vector<float> y_read, x_read;
  std::thread other([&] {
    Tensor y = from_vector<float>({0.5f, 4.0f}, device());
    y = y + 1.0f;
    const TensorImpl* y_state = &y.impl();
    for (int k = 0; k < 9; ++k) y = y + 1.0f;
    EXPECT_EQ(&y.impl(), y_state);
    sync();  // takes x as well: it is pending on the same device
    y_read = y.to_vector<float>();
    x_read = x.to_vector<float>();
  });
  other.join();
  EXPECT_EQ(y_read, (std::vector<float>{10.5f, 14.0f}));
  EXPECT_EQ(x_read, (std::vector<float>{2048.0f, -6144.0f}));
  x = x * 0.5f;  // x now holds a computed leaf: a new state
  state = &x.impl();
  for (int k = 0; k < 10; ++k) x = x * 0.5f;
  EXPECT_EQ(&x.impl(), state);
  sync();
  EXPECT_EQ(x.to_vector<float>(), (std::vector<float>{1.0f, -3.0f}));
}

// Deeper than the stack could hold one frame per node: tracing, running, reading and
// dropping such a graph must not recurse node by node.
TEST_F(Trace, AChainOfHundredsOfThousandsOfOpsRunsAndIsDropped) {
  constexpr int depth = 200000;
  Tensor x = from_vector<float>({1.0f, -2.0f}, device());
  {
    Tensor dropped = x;
    for (int k = 0; k < depth; ++k) dropped = dropped + 1.0f;
  }  // never run: released at once
  Tensor y = x;
  for (int k = 0; k < depth; ++k) y = y * 1.0000001f;
  sync();
  float expected = 1.0f;
  for (int k = 0; k < depth; ++k) expected *= 1.0000001f;
  std::vector<float> v = y.to_vector<float>();
  EXPECT_FLOAT_EQ(v[0], expected);
  EXPECT_FLOAT_EQ(v[1], -2.0f * expected);
  y = Tensor();  // the last owner of the step's graph goes
  EXPECT_FLOAT_EQ((x * 2).to_vector<float>()[1], -4.0f) << "the device keeps working";
}

/// A sum over H and W of max_pool2d's gradient is recorded as the same sum of the pooled
/// gradient (each window's gradient lands on one element): for overlapping, padded and ceil
/// mode windows too. Sums that keep a plane dim, and sums autograd records, are left as they are.
TEST_F(Trace, ASumOverThePlanesOfAPooledGradientReadsThePooledGradient) {
  struct Config {
    std::int64_t kernel, stride, padding;
    bool ceil;
  };
  for (Config c : {Config{2, 2, 0, false}, Config{3, 1, 1, false}, Config{3, 2, 1, true}}) {
    Tensor x = randn({3, 4, 7, 10}, device());
    Tensor pooled = max_pool2d(x, c.kernel, c.stride, c.padding, 1, c.ceil);
    Tensor g = randn(pooled.shape(), device());
    Tensor d = max_pool2d_backward(g, x, c.kernel, c.stride, c.padding, 1, c.ceil);
    Tensor s = sum(d, Dims{0, 2, 3}), kept = sum(d, Dims{0, 1, 2});
    EXPECT_EQ(debug::ir_text({s}).find("max_pool2d_backward"), std::string::npos) << debug::ir_text({s});
    EXPECT_NE(debug::ir_text({kept}).find("max_pool2d_backward"), std::string::npos);
    // Against the sum of the full gradient, computed on the eager device.
    std::vector<float> got = s.to_vector<float>();
    std::vector<float> want = sum(max_pool2d_backward(g.to(cpu), x.to(cpu), c.kernel, c.stride, c.padding, 1, c.ceil), Dims{0, 2, 3})
                                  .to_vector<float>();
    ASSERT_EQ(got.size(), want.size());
    for (std::size_t k = 0; k < got.size(); ++k) EXPECT_NEAR(got[k], want[k], 1e-5 * (1 + std::abs(want[k]))) << "kernel " << c.kernel;
  }
  Tensor x = randn({2, 3, 4, 4}, device()), g = randn({2, 3, 2, 2}, device()).requires_grad_();
  Tensor recorded = sum(max_pool2d_backward(g, x, 2), Dims{2, 3});
  EXPECT_NE(debug::ir_text({recorded}).find("max_pool2d_backward"), std::string::npos);
}

/// A sum accumulated term by term over a long loop (each term a group of its own, joined into
/// the sum's): groups merge smaller into larger, so planning stays linear, and the whole sum
/// runs as one group.
TEST_F(Trace, ASumOfHundredsOfThousandsOfTermsIsOneGroup) {
  constexpr int terms = 100000;
  Tensor x = from_vector<float>({0.0f, 1.0f}, device());
  sync();
  Tensor sum_of = x;
  for (int k = 0; k < terms; ++k) {
    Tensor half = x * 0.5f;
    Tensor term = exp(half);
    sum_of = sum_of + term;
  }
  EXPECT_EQ(debug::plan_stats({sum_of}).fused_groups, 1);
  std::vector<float> v = sum_of.to_vector<float>();
  float e0 = 0.0f, e1 = 1.0f;
  const float t1 = std::exp(0.5f);
  for (int k = 0; k < terms; ++k) e0 += 1.0f, e1 += t1;
  EXPECT_FLOAT_EQ(v[0], e0);
  EXPECT_FLOAT_EQ(v[1], e1);
}

TEST_F(Trace, ABarrierWithNothingPendingIsFine) {
  sync();
  sync();
  EXPECT_EQ(metrics::counter("MarkStep"), 2);
  EXPECT_EQ(metrics::timer("ExecuteTime").count, 0);
}

}  // namespace
}  // namespace lt
