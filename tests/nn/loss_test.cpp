// Losses against plain loops, their reductions, and their errors on both devices.
#include <cmath>

#include "nn_test_util.hpp"

namespace lt::test {
namespace {

namespace F = nn::functional;

constexpr std::int64_t n = 4, classes = 3;

std::vector<std::int64_t> targets() { return {2, 0, 1, 2}; }

/// log_softmax of each row, by a loop.
std::vector<double> log_softmax_rows(const std::vector<double>& x) {
  std::vector<double> out(x.size());
  for (std::int64_t i = 0; i < n; ++i) {
    double m = -INFINITY, s = 0;
    for (std::int64_t c = 0; c < classes; ++c) m = std::max(m, x[i * classes + c]);
    for (std::int64_t c = 0; c < classes; ++c) s += std::exp(x[i * classes + c] - m);
    for (std::int64_t c = 0; c < classes; ++c) out[i * classes + c] = x[i * classes + c] - m - std::log(s);
  }
  return out;
}

TEST(NnLoss, NllAndCrossEntropyMatchLoops) {
  for (Device dev : {cpu, device()}) {
    SCOPED_TRACE(dev.str());
    Tensor logits = uniform_f64({n, classes}, 1, -3, 3).to(dev);
    Tensor target = from_vector(targets(), {n}, dev);
    std::vector<double> lp = log_softmax_rows(values(logits));
    for (double smoothing : {0.0, 0.2}) {
      std::vector<double> per(n);
      double total = 0;
      for (std::int64_t i = 0; i < n; ++i) {
        double uniform = 0;
        for (std::int64_t c = 0; c < classes; ++c) uniform -= lp[i * classes + c] / classes;
        per[i] = -(1 - smoothing) * lp[i * classes + targets()[i]] + smoothing * uniform;
        total += per[i];
      }
      expect_values_near(F::cross_entropy(logits, target, F::Reduction::none, smoothing), per);
      expect_values_near(F::cross_entropy(logits, target, F::Reduction::sum, smoothing), {total});
      expect_values_near(F::cross_entropy(logits, target, F::Reduction::mean, smoothing), {total / n});
    }
    Tensor log_probs = log_softmax(logits, 1);
    double nll = 0;
    for (std::int64_t i = 0; i < n; ++i) nll -= lp[i * classes + targets()[i]];
    expect_values_near(F::nll_loss(log_probs, target), {nll / n});
  }
}

TEST(NnLoss, NllTakesSpatialTargets) {
  Tensor x = uniform_f64({2, 3, 2}, 2);  // [N, C, d1]
  Tensor t = from_vector(std::vector<std::int64_t>{0, 2, 1, 1}, {2, 2});
  std::vector<double> v = values(x);
  std::vector<std::int64_t> tv = {0, 2, 1, 1};
  std::vector<double> expected;
  for (int i = 0; i < 2; ++i)
    for (int d = 0; d < 2; ++d) expected.push_back(-v[i * 6 + tv[i * 2 + d] * 2 + d]);
  expect_values_near(F::nll_loss(x, t, F::Reduction::none), expected);
}

TEST(NnLoss, RegressionLossesMatchLoops) {
  for (Device dev : {cpu, device()}) {
    Tensor x = uniform_f64({3, 4}, 3, -3, 3).to(dev), y = uniform_f64({3, 4}, 4).to(dev);
    Tensor p = uniform_f64({3, 4}, 5, 0, 1).to(dev);
    std::vector<double> xv = values(x), yv = values(y), pv = values(p);
    double mse = 0, l1 = 0, bce = 0;
    for (std::size_t i = 0; i < xv.size(); ++i) {
      mse += (xv[i] - yv[i]) * (xv[i] - yv[i]);
      l1 += std::abs(xv[i] - yv[i]);
      double s = 1 / (1 + std::exp(-xv[i]));
      bce -= pv[i] * std::log(s) + (1 - pv[i]) * std::log(1 - s);
    }
    expect_values_near(F::mse_loss(x, y), {mse / 12});
    expect_values_near(F::l1_loss(x, y, F::Reduction::sum), {l1});
    expect_values_near(F::binary_cross_entropy_with_logits(x, p), {bce / 12});
    // The stable form stays finite where the plain one overflows.
    Tensor big = from_vector(std::vector<double>{800, -800}, {2}, dev), half = full({2}, 0.5, dev, f64);
    expect_values_near(F::binary_cross_entropy_with_logits(big, half, F::Reduction::none), {400, 400});
  }
}

TEST(NnLoss, GradientsFlow) {
  Tensor logits = uniform_f64({n, classes}, 6).requires_grad_();
  Tensor target = from_vector(targets(), {n});
  F::cross_entropy(logits, target).backward();
  std::vector<double> g = values(logits.grad()), x = values(logits);
  for (std::int64_t i = 0; i < n; ++i) {
    double s = 0;
    for (std::int64_t c = 0; c < classes; ++c) s += std::exp(x[i * classes + c]);
    for (std::int64_t c = 0; c < classes; ++c)
      EXPECT_NEAR(g[i * classes + c], (std::exp(x[i * classes + c]) / s - (c == targets()[i])) / n, 1e-9);
  }
}

TEST(NnLoss, BadInputRaises) {
  Tensor logits = zeros({n, classes});
  EXPECT_THROW(F::cross_entropy(logits, from_vector(std::vector<std::int64_t>{0, 1, 2}, {3})), Error);
  EXPECT_THROW(F::nll_loss(logits, zeros({n})), Error);  // floating target
  EXPECT_THROW(F::mse_loss(zeros({2, 3}), zeros({3, 2})), Error);
  EXPECT_THROW(F::l1_loss(zeros({2}), zeros({2}, cpu, i64)), Error);
  EXPECT_THROW(F::cross_entropy(logits, from_vector(targets(), {n}), F::Reduction::mean, 1.5), Error);
  try {
    F::nll_loss(logits, from_vector(std::vector<std::int64_t>{0, 3, 1, 2}, {n}));
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("target class 3 is out of range for 3 classes"), std::string::npos) << e.what();
  }
  EXPECT_THROW(F::nll_loss(logits, from_vector(std::vector<std::int64_t>{0, -1, 1, 2}, {n})), Error);
}

TEST(NnLoss, OutOfRangeClassOnLazyDeviceRaisesAtTheRead) {
  Device dev = device();
  Tensor logits = zeros({n, classes}, dev);
  Tensor loss = F::nll_loss(logits, from_vector(std::vector<std::int64_t>{0, 7, 1, 2}, {n}, dev));
  EXPECT_THROW({
    sync();
    wait_device_ops();
    (void)loss.item<float>();
  }, Error);
  // The device stays usable.
  expect_values_near(F::nll_loss(zeros({n, classes}, dev), from_vector(targets(), {n}, dev)), {0.0});
}

}  // namespace
}  // namespace lt::test
