// Optimizers against hand-written update loops over fixed gradients, on both devices;
// schedules; and the optimizer's checks.
#include <cmath>

#include "nn_test_util.hpp"

namespace lt::test {
namespace {

constexpr int steps = 4;

/// The gradient of step s: a fixed function of s and the element.
double grad_at(int s, std::size_t i) { return std::sin(0.7 * static_cast<double>(i) + s) + 0.1 * s; }

/// Runs `steps` updates of `opt` on p (4 elements, starting at 1, 2, 3, 4) with gradients
/// set by hand, and returns p's values.
template <class MakeOpt>
std::vector<double> run(Device dev, MakeOpt make) {
  Tensor p = from_vector(std::vector<double>{1, 2, 3, 4}, {4}, dev).requires_grad_();
  auto opt = make(std::vector<Tensor>{p});
  for (int s = 0; s < steps; ++s) {
    opt.zero_grad();
    std::vector<double> g(4);
    for (std::size_t i = 0; i < 4; ++i) g[i] = grad_at(s, i);
    p.mutable_grad() = from_vector(g, {4}, dev);
    opt.step();
    if (dev.is_lazy()) sync(dev);
  }
  return values(p);
}

std::vector<double> sgd_loop(double lr, double momentum, double dampening, double wd, bool nesterov) {
  std::vector<double> p = {1, 2, 3, 4}, buf(4);
  for (int s = 0; s < steps; ++s)
    for (std::size_t i = 0; i < 4; ++i) {
      double g = grad_at(s, i) + wd * p[i];
      if (momentum != 0) {
        buf[i] = s == 0 ? g : momentum * buf[i] + (1 - dampening) * g;
        g = nesterov ? g + momentum * buf[i] : buf[i];
      }
      p[i] -= lr * g;
    }
  return p;
}

std::vector<double> adam_loop(double lr, double b1, double b2, double eps, double wd, bool decoupled) {
  std::vector<double> p = {1, 2, 3, 4}, m(4), v(4);
  for (int s = 0; s < steps; ++s)
    for (std::size_t i = 0; i < 4; ++i) {
      if (decoupled) p[i] *= 1 - lr * wd;
      double g = grad_at(s, i) + (decoupled ? 0 : wd * p[i]);
      m[i] = b1 * m[i] + (1 - b1) * g;
      v[i] = b2 * v[i] + (1 - b2) * g * g;
      double mhat = m[i] / (1 - std::pow(b1, s + 1)), vhat = v[i] / (1 - std::pow(b2, s + 1));
      p[i] -= lr * mhat / (std::sqrt(vhat) + eps);
    }
  return p;
}

void expect_near(const std::vector<double>& a, const std::vector<double>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], b[i], 1e-12 * (1 + std::abs(b[i]))) << "element " << i;
}

TEST(NnOptim, SgdMatchesLoop) {
  struct Case { double momentum, dampening, wd; bool nesterov; };
  for (Case c : {Case{0, 0, 0, false}, Case{0.5, 0, 0, false}, Case{0.9, 0.3, 0.01, false}, Case{0.9, 0, 0.1, true}})
    for (Device dev : {cpu, device()}) {
      SCOPED_TRACE(testing::Message() << dev << " momentum " << c.momentum << " nesterov " << c.nesterov);
      auto got = run(dev, [&](std::vector<Tensor> ps) {
        return optim::SGD(ps, {.lr = 0.1, .momentum = c.momentum, .dampening = c.dampening, .weight_decay = c.wd,
                               .nesterov = c.nesterov});
      });
      expect_near(got, sgd_loop(0.1, c.momentum, c.dampening, c.wd, c.nesterov));
    }
}

TEST(NnOptim, AdamAndAdamWMatchLoops) {
  for (Device dev : {cpu, device()}) {
    SCOPED_TRACE(dev.str());
    expect_near(run(dev, [](std::vector<Tensor> ps) { return optim::Adam(ps, {.lr = 0.05}); }),
                adam_loop(0.05, 0.9, 0.999, 1e-8, 0, false));
    expect_near(run(dev, [](std::vector<Tensor> ps) { return optim::Adam(ps, {.lr = 0.05, .beta1 = 0.8, .weight_decay = 0.1}); }),
                adam_loop(0.05, 0.8, 0.999, 1e-8, 0.1, false));
    expect_near(run(dev, [](std::vector<Tensor> ps) { return optim::AdamW(ps, {.lr = 0.05, .weight_decay = 0.1}); }),
                adam_loop(0.05, 0.9, 0.999, 1e-8, 0.1, true));
  }
}

TEST(NnOptim, StepSkipsParametersWithoutGradients) {
  Tensor a = ones({2}).requires_grad_(), b = ones({2}).requires_grad_();
  optim::SGD opt({a, b}, {.lr = 1});
  a.mutable_grad() = full({2}, 0.5);
  opt.step();
  EXPECT_EQ(values(a), (std::vector<double>{0.5, 0.5}));
  EXPECT_EQ(values(b), (std::vector<double>{1, 1}));
  opt.zero_grad();
  EXPECT_FALSE(a.grad().defined());
  EXPECT_TRUE(a.is_leaf() && a.requires_grad());
}

TEST(NnOptim, ChangingTheLearningRateCompilesNothing) {
  Device dev = device();
  Tensor p = ones({8}, dev).requires_grad_();
  optim::SGD opt({p}, {.lr = 0.1, .momentum = 0.9});
  optim::CosineAnnealingLR schedule(opt, 100);
  auto step = [&] {
    opt.zero_grad();
    Tensor(p * p).sum().backward();
    opt.step();
    schedule.step();
    sync(dev);
  };
  step();
  step();
  wait_device_ops();
  {
    expect_cached guard;
    for (int i = 0; i < 5; ++i) step();
    wait_device_ops();
  }
  EXPECT_NEAR(opt.lr(), 0.1 * (1 + std::cos(M_PI * 7 / 100)) / 2, 1e-15);
}

TEST(NnOptim, Schedules) {
  Tensor p = ones({1}).requires_grad_();
  optim::SGD opt({p}, {.lr = 1.0});
  optim::StepLR step_lr(opt, 2, 0.5);
  std::vector<double> seen;
  for (int e = 0; e < 5; ++e) {
    step_lr.step();
    seen.push_back(opt.lr());
  }
  EXPECT_EQ(seen, (std::vector<double>{1.0, 0.5, 0.5, 0.25, 0.25}));
  optim::SGD opt2({p}, {.lr = 1.0});
  optim::CosineAnnealingLR cosine(opt2, 4, 0.2);
  for (int t = 1; t <= 4; ++t) {
    cosine.step();
    EXPECT_NEAR(opt2.lr(), 0.2 + 0.8 * (1 + std::cos(M_PI * t / 4)) / 2, 1e-15);
  }
  EXPECT_NEAR(opt2.lr(), 0.2, 1e-15);
  EXPECT_THROW(optim::StepLR(opt, 0), Error);
}

TEST(NnOptim, RejectsBadOptions) {
  Tensor p = ones({1}).requires_grad_();
  EXPECT_THROW(optim::SGD({p}, {.lr = -1}), Error);
  EXPECT_THROW(optim::SGD({p}, {.lr = 0.1, .nesterov = true}), Error);
  EXPECT_THROW(optim::Adam({p}, {.beta1 = 1.0}), Error);
  EXPECT_THROW(optim::SGD({ones({1})}), Error);  // does not require grad
  Tensor not_leaf = Tensor(p * 2);
  EXPECT_THROW(optim::SGD({not_leaf}), Error);
}

}  // namespace
}  // namespace lt::test
