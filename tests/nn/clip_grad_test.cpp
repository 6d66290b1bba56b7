// Gradient clipping against plain loops on both devices; that clipping records into the step
// without a barrier or a read; non-finite norms raised as faults of the step.
#include <cmath>
#include <limits>
#include <string>

#include "nn_test_util.hpp"

namespace lt::test {
namespace {

constexpr double inf = std::numeric_limits<double>::infinity();

/// Gradients of three parameters ([2, 3], [4] and one without a gradient) as plain values.
std::vector<std::vector<double>> grad_values(double scale) {
  return {{0.3, -1.2, 0.5, 2.0, -0.7, 0.1}, {1.5 * scale, -0.2, 0.0, 0.9 * scale}};
}

struct Params {
  std::vector<Tensor> all;
};

Params make_params(Device dev, double scale) {
  auto g = grad_values(scale);
  Tensor a = zeros({2, 3}, dev, f64).requires_grad_(), b = zeros({4}, dev, f64).requires_grad_();
  Tensor c = zeros({2}, dev, f64).requires_grad_();
  a.mutable_grad() = from_vector(g[0], {2, 3}, dev);
  b.mutable_grad() = from_vector(g[1], {4}, dev);
  return {{a, b, c}};
}

/// PyTorch's rule by a loop: the total norm, and each gradient times min(1, max / (total + 1e-6)).
double clip_loop(std::vector<std::vector<double>>& grads, double max_norm, double p) {
  double total = 0;
  for (auto& g : grads)
    for (double v : g) total = std::isinf(p) ? std::max(total, std::abs(v)) : total + std::pow(std::abs(v), p);
  if (!std::isinf(p)) total = std::pow(total, 1 / p);
  double coef = std::min(1.0, max_norm / (total + 1e-6));
  for (auto& g : grads)
    for (double& v : g) v *= coef;
  return total;
}

TEST(NnClipGrad, NormMatchesLoop) {
  for (Device dev : {cpu, device()})
    for (double p : {2.0, 1.0, 3.0, inf})
      for (double max_norm : {0.5, 100.0}) {
        SCOPED_TRACE(testing::Message() << dev << " norm_type " << p << " max_norm " << max_norm);
        Params ps = make_params(dev, 2.0);
        Tensor total = nn::utils::clip_grad_norm_(ps.all, max_norm, p);
        auto want = grad_values(2.0);
        double want_total = clip_loop(want, max_norm, p);
        expect_values_near(total, {want_total}, 1e-12);
        expect_values_near(ps.all[0].grad(), want[0], 1e-12);
        expect_values_near(ps.all[1].grad(), want[1], 1e-12);
        EXPECT_FALSE(ps.all[2].grad().defined());
      }
}

TEST(NnClipGrad, NormOfMixedDtypesAndNoGradients) {
  Tensor a = zeros({3}, device(), f32).requires_grad_(), b = zeros({2}, device(), f64).requires_grad_();
  a.mutable_grad() = from_vector(std::vector<float>{3, 0, 0}, {3}, device());
  b.mutable_grad() = from_vector(std::vector<double>{0, 4}, {2}, device());
  Tensor total = nn::utils::clip_grad_norm_({a, b}, 1.0);
  EXPECT_EQ(total.dtype(), f64);
  expect_values_near(total, {5.0}, 1e-12);
  expect_values_near(a.grad(), {3 / (5 + 1e-6), 0, 0}, 1e-6);
  EXPECT_EQ(a.grad().dtype(), f32);
  expect_values_near(b.grad(), {0, 4 / (5 + 1e-6)}, 1e-12);

  Tensor none = zeros({2}, device()).requires_grad_();
  expect_values_near(nn::utils::clip_grad_norm_({none}, 1.0), {0.0});
  expect_values_near(nn::utils::clip_grad_norm_({}, 1.0), {0.0});
}

TEST(NnClipGrad, NormRecordsIntoTheStepWithoutABarrierOrARead) {
  Device dev = device();
  Tensor w = from_vector(std::vector<double>{0.5, -1.0, 2.0, 0.25}, {4}, dev).requires_grad_();
  optim::SGD opt({w}, {.lr = 0.1});
  sync(dev);
  wait_device_ops();
  auto step = [&](double x, double max_norm) {
    opt.zero_grad();
    Tensor(w * w * x).sum().backward();
    std::int64_t marks = metrics::counter("MarkStep"), reads = metrics::counter("TransferFromDevice");
    Tensor total = nn::utils::clip_grad_norm_({w}, max_norm, 2.0, true);
    EXPECT_EQ(metrics::counter("MarkStep"), marks) << "clip_grad_norm_ ran a barrier";
    EXPECT_EQ(metrics::counter("TransferFromDevice"), reads) << "clip_grad_norm_ read a value";
    // Backward, the norm and the clipping are one pending graph: the norm's reduction takes
    // backward's gradient and its square as its prologue; then the root and the check (one
    // node), the coefficient (one node) and the scaling; the seed of backward aside.
    PlanStats stats = debug::plan_stats({w.grad(), total});
    EXPECT_EQ(stats.row_groups, 1) << debug::plan_text({w.grad(), total});
    EXPECT_LE(stats.kernels, 5) << debug::plan_text({w.grad(), total});
    opt.step();
    sync(dev);
    EXPECT_EQ(metrics::counter("MarkStep"), marks + 1);
    return total;
  };
  std::vector<double> want = {0.5, -1.0, 2.0, 0.25};
  for (int s = 0; s < 5; ++s) {
    double x = 1.0 + s, max_norm = 0.3 + 0.2 * s;  // never 1, which a graph folds
    std::vector<double> g(4);
    for (std::size_t i = 0; i < 4; ++i) g[i] = 2 * x * want[i];
    std::vector<std::vector<double>> gs{g};
    double want_total = clip_loop(gs, max_norm, 2.0);
    for (std::size_t i = 0; i < 4; ++i) want[i] -= 0.1 * gs[0][i];
    if (s < 2) {
      expect_values_near(step(x, max_norm), {want_total}, 1e-12);
    } else {  // max_norm is a value of the plan: changing it compiles nothing
      expect_cached guard;
      expect_values_near(step(x, max_norm), {want_total}, 1e-12);
    }
    expect_values_near(w, want, 1e-12);
  }
}

TEST(NnClipGrad, NonFiniteNormRaisesAtTheBarrierWhenAsked) {
  Device dev = device();
  for (double bad : {std::numeric_limits<double>::quiet_NaN(), inf}) {
    SCOPED_TRACE(bad);
    Tensor w = zeros({3}, dev, f64).requires_grad_();
    w.mutable_grad() = from_vector(std::vector<double>{1, bad, 2}, {3}, dev);
    Tensor total = nn::utils::clip_grad_norm_({w}, 1.0, 2.0, true);  // records; raises nothing yet
    std::string m = error_text([&] { sync(dev); wait_device_ops(); });
    EXPECT_NE(m.find("clip_grad_norm_: the total norm of order 2 of the gradients is "), std::string::npos) << m;
    EXPECT_NE(m.find(std::isnan(bad) ? "nan" : "inf"), std::string::npos) << m;
    EXPECT_NE(m.find("clip_grad_test.cpp"), std::string::npos) << "names the caller's line: " << m;
    // The device works on.
    expect_values_near(Tensor(ones({2}, dev) * 3), {3, 3});
  }
  // On the eager device the kernel runs at the call.
  Tensor c = zeros({2}, cpu, f32).requires_grad_();
  c.mutable_grad() = from_vector(std::vector<float>{INFINITY, 1}, {2});
  std::string m = error_text([&] { nn::utils::clip_grad_norm_({c}, 1.0, 1.0, true); });
  EXPECT_NE(m.find("clip_grad_norm_: the total norm of order 1 of the gradients is inf"), std::string::npos) << m;
}

TEST(NnClipGrad, NonFiniteNormScalesAsPyTorchWhenAllowed) {
  for (Device dev : {cpu, device()}) {
    Tensor w = zeros({3}, dev, f64).requires_grad_();
    w.mutable_grad() = from_vector(std::vector<double>{1, inf, -2}, {3}, dev);
    Tensor total = nn::utils::clip_grad_norm_({w}, 1.0);
    EXPECT_TRUE(std::isinf(total.item<double>()));
    std::vector<double> g = values(w.grad());  // times max_norm / inf = 0
    EXPECT_EQ(g[0], 0.0);
    EXPECT_TRUE(std::isnan(g[1]));
    EXPECT_EQ(g[2], 0.0);
  }
}

TEST(NnClipGrad, CheckFiniteFaultsOnTheLazyDeviceAndPassesFiniteValues) {
  Device dev = device();
  Tensor x = from_vector(std::vector<float>{1, 2, 3}, {3}, dev);
  expect_values_near(Tensor(check_finite(x) * 2), {2, 4, 6});
  Tensor bad = from_vector(std::vector<float>{1, NAN, 3}, {3}, dev);
  Tensor y = check_finite(bad) + 1;
  std::string m = error_text([&] { (void)y.to_vector<float>(); });
  EXPECT_NE(m.find("check_finite: a value is nan"), std::string::npos) << m;
  EXPECT_THROW(Tensor(check_finite(from_vector(std::vector<std::int32_t>{1}, {1}))), Error);
}

TEST(NnClipGrad, ValueMatchesLoop) {
  for (Device dev : {cpu, device()}) {
    SCOPED_TRACE(dev.str());
    Params ps = make_params(dev, 2.0);
    ps.all[1].mutable_grad() = from_vector(std::vector<double>{3.0, -0.2, std::nan(""), -5}, {4}, dev);
    nn::utils::clip_grad_value_(ps.all, 0.6);
    auto want = grad_values(2.0);
    for (double& v : want[0]) v = std::clamp(v, -0.6, 0.6);
    expect_values_near(ps.all[0].grad(), want[0], 1e-15);
    std::vector<double> b = values(ps.all[1].grad());
    EXPECT_EQ(b[0], 0.6);
    EXPECT_EQ(b[1], -0.2);
    EXPECT_TRUE(std::isnan(b[2]));
    EXPECT_EQ(b[3], -0.6);
    EXPECT_FALSE(ps.all[2].grad().defined());
  }
}

TEST(NnClipGrad, RejectsBadArguments) {
  Params ps = make_params(cpu, 1.0);
  EXPECT_THROW(nn::utils::clip_grad_norm_(ps.all, -1.0), Error);
  EXPECT_THROW(nn::utils::clip_grad_norm_(ps.all, std::nan("")), Error);
  for (double p : {0.0, -2.0, -inf, std::nan("")}) EXPECT_THROW(nn::utils::clip_grad_norm_(ps.all, 1.0, p), Error) << p;
  EXPECT_THROW(nn::utils::clip_grad_value_(ps.all, -0.5), Error);
  Tensor other = zeros({2}, device(), f64).requires_grad_();
  other.mutable_grad() = zeros({2}, device(), f64);
  std::string m = error_text([&] { nn::utils::clip_grad_norm_({ps.all[0], other}, 1.0); });
  EXPECT_NE(m.find("clip_grad_norm_"), std::string::npos) << m;
  EXPECT_NE(m.find("one device"), std::string::npos) << m;
}

}  // namespace
}  // namespace lt::test
