// Reverse-mode semantics: requires_grad, grad accumulation and reset, no_grad, detach, errors,
// in-place updates, released tapes; on the lazy device, forward + backward + update as one
// graph at the barrier, without autograd in the graph and without growth across steps.
#include <gtest/gtest.h>

#include <lazytensor/lazytensor.hpp>

namespace lt {
namespace {

std::vector<double> values(const Tensor& t) { return t.to_vector<double>(); }
Tensor vec(std::vector<double> v, Device dev) { return from_vector(v, dev); }

class Autograd : public ::testing::TestWithParam<Device> {};

TEST_P(Autograd, GradIsUndefinedUntilBackwardThenAccumulatesAndResets) {
  Tensor x = vec({1, 2, 3}, GetParam()).requires_grad_();
  EXPECT_TRUE(x.requires_grad());
  EXPECT_TRUE(x.is_leaf());
  EXPECT_FALSE(x.grad().defined());
  Tensor y = (x * x).sum();
  EXPECT_TRUE(y.requires_grad());
  EXPECT_FALSE(y.is_leaf());
  y.backward();
  EXPECT_EQ(values(x.grad()), (std::vector<double>{2, 4, 6}));
  (x * 3.0).sum().backward();  // accumulates
  EXPECT_EQ(values(x.grad()), (std::vector<double>{5, 7, 9}));
  x.mutable_grad() = Tensor();
  EXPECT_FALSE(x.grad().defined());
  (x * 3.0).sum().backward();
  EXPECT_EQ(values(x.grad()), (std::vector<double>{3, 3, 3}));
}

/// Through bf16 ops (each f32 between casts) the gradient of a bf16 leaf is bf16, and it is
/// the f64 gradient within bf16's precision: a few units of 2^-8 over the chain's ops.
TEST_P(Autograd, Bf16LeafGradientFlowsThroughTheCasts) {
  const std::vector<double> xs = {-1.5, -0.25, 0.0, 0.5, 1.25, 2.0};
  const std::vector<double> ws = {0.75, -2.0, 1.5, 0.125, -0.5, 3.0};
  Tensor x = vec(xs, GetParam()).to(bf16).requires_grad_();
  Tensor w = vec(ws, GetParam()).to(bf16);
  Tensor loss = (tanh(x) * w + x * x).sum();
  EXPECT_EQ(loss.dtype(), bf16);
  loss.backward();
  ASSERT_TRUE(x.grad().defined());
  EXPECT_EQ(x.grad().dtype(), bf16);
  std::vector<double> got = values(x.grad().to(f64));
  for (std::size_t k = 0; k < xs.size(); ++k) {
    const double t = std::tanh(xs[k]), want = ws[k] * (1 - t * t) + 2 * xs[k];
    EXPECT_NEAR(got[k], want, 4 * std::ldexp(1.0, -8) * (std::abs(ws[k]) + std::abs(2 * xs[k])) + 1e-6) << "element " << k;
  }
}

TEST_P(Autograd, NoGradRecordsNothing) {
  Tensor x = vec({1, 2}, GetParam()).requires_grad_();
  EXPECT_TRUE(is_grad_enabled());
  Tensor y;
  {
    no_grad outer;
    {
      no_grad inner;
      EXPECT_FALSE(is_grad_enabled());
    }
    EXPECT_FALSE(is_grad_enabled());
    y = exp(x) * 2.0;
  }
  EXPECT_TRUE(is_grad_enabled());
  EXPECT_FALSE(y.requires_grad());
  EXPECT_THROW(y.sum().backward(), Error);
}

TEST_P(Autograd, DetachCutsTheHistoryAndSharesTheValue) {
  Tensor x = vec({1, 2}, GetParam()).requires_grad_();
  Tensor h = x * 2.0;
  Tensor d = h.detach();
  EXPECT_FALSE(d.requires_grad());
  EXPECT_EQ(values(d), (std::vector<double>{2, 4}));
  (h * d).sum().backward();  // d is a constant here: the gradient is d * 2
  EXPECT_EQ(values(x.grad()), (std::vector<double>{4, 8}));
}

TEST_P(Autograd, NonScalarBackwardNeedsAGradient) {
  Tensor x = vec({1, 2, 3}, GetParam()).requires_grad_();
  Tensor y = x * 2.0;
  try {
    y.backward();
    FAIL() << "expected lt::Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("one-element"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(x.grad().defined()) << "a failed backward accumulates nothing";
  EXPECT_THROW(y.backward(vec({1, 1}, GetParam())), Error);  // wrong shape
  y.backward(vec({1, 10, 100}, GetParam()));
  EXPECT_EQ(values(x.grad()), (std::vector<double>{2, 20, 200}));
}

TEST_P(Autograd, MisuseRaises) {
  Device dev = GetParam();
  EXPECT_THROW(vec({1, 2}, dev).sum().backward(), Error);  // does not require grad
  EXPECT_THROW(from_vector(std::vector<std::int64_t>{1, 2}, dev).requires_grad_(), Error);
  Tensor x = vec({1, 2}, dev).requires_grad_();
  Tensor y = x * x;
  EXPECT_THROW(y.requires_grad_(false), Error);  // not a leaf
  EXPECT_THROW(vec({1}, dev).mutable_grad(), Error);
  EXPECT_FALSE((x > 1.0).eval().requires_grad()) << "bool results carry no gradient";
  EXPECT_FALSE(argmax(x).requires_grad());
  x.requires_grad_(false);
  EXPECT_FALSE(x.requires_grad());
}

TEST_P(Autograd, TheTapeIsReleasedUnlessRetained) {
  Tensor x = vec({1, 2}, GetParam()).requires_grad_();
  Tensor y = (exp(x) * x).sum();
  y.backward({}, /*retain_graph=*/true);
  std::vector<double> once = values(x.grad());
  y.backward();
  std::vector<double> twice = values(x.grad());
  for (std::size_t k = 0; k < once.size(); ++k) EXPECT_DOUBLE_EQ(twice[k], 2 * once[k]);
  try {
    y.backward();
    FAIL() << "expected lt::Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("retain_graph"), std::string::npos) << e.what();
  }
}

TEST_P(Autograd, InPlaceUpdates) {
  Device dev = GetParam();
  Tensor w = vec({1, 2}, dev).requires_grad_();
  (w * w).sum().backward();
  EXPECT_THROW(w -= w.grad() * w, Error) << "a leaf that requires grad takes no history";
  EXPECT_TRUE(w.is_leaf());
  {
    no_grad guard;
    w -= w.grad() * 0.5;  // an optimizer step
  }
  EXPECT_TRUE(w.is_leaf());
  EXPECT_TRUE(w.requires_grad());
  EXPECT_EQ(values(w), (std::vector<double>{0, 0}));

  Tensor x = vec({1, 2}, dev).requires_grad_();
  Tensor y = x * 3.0;
  y += x * x;  // the history comes along: y = 3x + x^2
  y.sum().backward();
  EXPECT_EQ(values(x.grad()), (std::vector<double>{5, 7}));
}

TEST_P(Autograd, GradientsKeepTheLeafDtype) {
  Tensor x = vec({1, 2}, GetParam()).to(DType::f32).requires_grad_();
  Tensor w = vec({3, 4}, GetParam()).requires_grad_();  // f64
  (x * w).sum().backward();
  EXPECT_EQ(x.grad().dtype(), DType::f32);
  EXPECT_EQ(values(x.grad()), (std::vector<double>{3, 4}));
  EXPECT_EQ(w.grad().dtype(), DType::f64);
}

TEST_P(Autograd, StaticShapesShareTheTensorsHistory) {
  Device dev = GetParam();
  Tensor wt = vec({1, -1, 2, 0.5, 3, -2}, dev).reshape({2, 3}).detach().requires_grad_();
  FixedTensor<2, 3> w{wt};
  FixedTensor<4, 3> x{vec({1, 2, 3, 4, 5, 6, -1, -2, -3, 0, 1, 0}, dev).reshape({4, 3})};
  FixedTensor<4, 2> y = relu(linear(x, w));
  sum(Tensor(y)).backward();
  // d/dw sum(relu(x w^T)) = (x w^T > 0)^T x
  Tensor mask = (matmul(Tensor(x), wt.detach().t()) > 0.0).eval().to(DType::f64);
  EXPECT_EQ(values(wt.grad()), values(matmul(mask.t(), Tensor(x))));
}

INSTANTIATE_TEST_SUITE_P(BothDevices, Autograd, ::testing::Values(cpu, device()),
                         [](const auto& info) { return info.param.is_lazy() ? std::string("lazy") : std::string("cpu"); });

// ---- the lazy device ----

TEST(LazyAutograd, ForwardBackwardAndUpdateRunAsOneGraphAtTheBarrier) {
  Device dev = device();
  Tensor w = randn({4, 3}, dev).requires_grad_(), b = zeros({4}, dev).requires_grad_();
  Tensor x = randn({5, 3}, dev);
  sync(dev);
  wait_device_ops();
  std::int64_t steps = metrics::counter("MarkStep"), compiles = metrics::counter("UncachedCompile");
  std::int64_t matmuls = metrics::counter("lt::matmul");

  Tensor loss = relu(linear(x, w, b)).pow(2.0).mean();
  loss.backward();
  EXPECT_EQ(metrics::counter("lt::matmul"), matmuls) << "backward ran ops";
  EXPECT_FALSE(w.grad().impl().node->is_data()) << "the gradient is a pending value";
  {
    no_grad guard;
    w -= w.grad() * 0.1;
    b -= b.grad() * 0.1;
  }
  EXPECT_EQ(metrics::counter("UncachedCompile"), compiles) << "nothing compiled before the barrier";
  sync(dev);
  EXPECT_EQ(metrics::counter("MarkStep"), steps + 1);
  EXPECT_EQ(metrics::counter("UncachedCompile"), compiles + 1) << "forward, backward and update are one graph";
  EXPECT_EQ(metrics::counter("lt::matmul"), matmuls + 2) << "the forward product and the weight's gradient ran";
  EXPECT_TRUE(w.grad().impl().node->is_data());
  EXPECT_TRUE(w.impl().node->is_data());
}

TEST(LazyAutograd, AutogradLeavesTheGraphAlone) {
  Device dev = device();
  Tensor a = randn({3, 4}, dev), b = randn({4, 2}, dev);
  sync(dev);
  auto f = [](const Tensor& p, const Tensor& q) { return softmax(tanh(p).matmul(q) * 2.0, 1).sum(0); };
  Tensor plain = f(a, b);
  Tensor ga = a.detach().requires_grad_();
  Tensor tracked = f(ga, b);
  EXPECT_TRUE(tracked.requires_grad());
  EXPECT_EQ(plain.impl().node->hash, tracked.impl().node->hash);
  EXPECT_EQ(debug::ir_text({plain}), debug::ir_text({tracked}));
}

TEST(LazyAutograd, TheGraphDoesNotGrowAcrossSteps) {
  Device dev = device();
  Tensor w = randn({3, 3}, dev).requires_grad_();
  Tensor x = randn({2, 3}, dev);
  sync(dev);
  std::string first;
  std::weak_ptr<const Node> old_hidden;
  for (int step = 0; step < 4; ++step) {
    w.mutable_grad() = Tensor();
    Tensor hidden = tanh(x.matmul(w));
    if (step == 0) old_hidden = hidden.impl().node;
    Tensor loss = hidden.sum();
    loss.backward();
    {
      no_grad guard;
      w -= w.grad() * 0.01;
    }
    std::string text = debug::ir_text({w});
    if (step == 0) first = text;
    EXPECT_EQ(text, first) << "step " << step;
    sync(dev);
    EXPECT_TRUE(w.impl().node->is_data());
  }
  wait_device_ops();
  EXPECT_TRUE(old_hidden.expired()) << "an old step's graph is still referenced";
}

TEST(LazyAutograd, BackwardAfterABarrierUsesTheComputedValues) {
  std::vector<double> grads[2];
  for (Device dev : {cpu, device()}) {
    Tensor x = vec({0.5, -1, 2}, dev).requires_grad_();
    Tensor loss = (exp(x) * sin(x)).sum();
    if (dev.is_lazy()) {
      sync(dev);  // the saved values become device data with the loss
      EXPECT_TRUE(loss.impl().node->is_data());
    }
    loss.backward();
    grads[dev.is_lazy()] = values(x.grad());
  }
  ASSERT_EQ(grads[0].size(), grads[1].size());
  for (std::size_t k = 0; k < grads[0].size(); ++k) EXPECT_DOUBLE_EQ(grads[1][k], grads[0][k]);
}

TEST(LazyAutograd, MlpTrainingLossDecreases) {
  Device dev = device();
  manual_seed(3);
  Tensor x = randn({16, 4}, dev), target = randn({16, 1}, dev);
  Tensor w1 = (randn({8, 4}, dev) * 0.5).eval().requires_grad_(), b1 = zeros({8}, dev).requires_grad_();
  Tensor w2 = (randn({1, 8}, dev) * 0.5).eval().requires_grad_(), b2 = zeros({1}, dev).requires_grad_();
  std::vector<Tensor> params{w1, b1, w2, b2};
  std::vector<double> losses;
  for (int step = 0; step < 30; ++step) {
    for (Tensor& p : params) p.mutable_grad() = Tensor();
    Tensor loss = (linear(tanh(linear(x, w1, b1)), w2, b2) - target).pow(2.0).mean();
    loss.backward();
    {
      no_grad guard;
      for (Tensor& p : params) p -= p.grad() * 0.1;
    }
    sync(dev);
    losses.push_back(loss.item<float>());
  }
  EXPECT_LT(losses.back(), 0.8 * losses.front());
}

}  // namespace
}  // namespace lt
