// cross_entropy and nll_loss with ignored targets, against plain loops and finite differences:
// PyTorch's semantics (mean over the counted targets, zero gradient at ignored ones, NaN when
// every target is ignored).
#include <cmath>

#include "nn_test_util.hpp"

namespace lt::test {
namespace {

namespace F = nn::functional;

constexpr std::int64_t rows = 5, classes = 4;

/// Per-row cross entropy by a loop (0 at ignored rows), with label smoothing eps.
std::vector<double> per_row(const std::vector<double>& x, const std::vector<std::int64_t>& t, std::int64_t ignore,
                            double eps) {
  std::vector<double> out(t.size());
  for (std::size_t i = 0; i < t.size(); ++i) {
    if (t[i] == ignore) continue;
    double m = -INFINITY, s = 0;
    for (std::int64_t c = 0; c < classes; ++c) m = std::max(m, x[i * classes + c]);
    for (std::int64_t c = 0; c < classes; ++c) s += std::exp(x[i * classes + c] - m);
    double uniform = 0;
    for (std::int64_t c = 0; c < classes; ++c) uniform -= (x[i * classes + c] - m - std::log(s)) / classes;
    out[i] = -(1 - eps) * (x[i * classes + t[i]] - m - std::log(s)) + eps * uniform;
  }
  return out;
}

TEST(NnIgnoreIndex, CrossEntropyAndNllMatchLoops) {
  const std::vector<std::int64_t> t = {2, -100, 0, 3, -100};
  for (Device dev : {cpu, device()})
    for (double eps : {0.0, 0.1}) {
      SCOPED_TRACE(testing::Message() << dev << " label_smoothing " << eps);
      Tensor logits = uniform_f64({rows, classes}, 7, -3, 3).to(dev);
      Tensor target = from_vector(t, {rows}, dev);
      std::vector<double> per = per_row(values(logits), t, -100, eps);
      double total = 0;
      for (double v : per) total += v;
      expect_values_near(F::cross_entropy(logits, target, F::Reduction::none, eps), per, 1e-12);
      expect_values_near(F::cross_entropy(logits, target, F::Reduction::sum, eps), {total}, 1e-12);
      expect_values_near(F::cross_entropy(logits, target, F::Reduction::mean, eps), {total / 3}, 1e-12);
      if (eps == 0) {
        Tensor log_probs = log_softmax(logits, 1);
        expect_values_near(F::nll_loss(log_probs, target), {total / 3}, 1e-12);
        expect_values_near(F::nll_loss(log_probs, target.to(i32), F::Reduction::none), per, 1e-12);
      }
    }
}

TEST(NnIgnoreIndex, AnyIgnoreIndexAndSpatialTargets) {
  // ignore_index may be a class: its targets count for nothing.
  const std::vector<std::int64_t> t = {1, 3, 1, 0, 2};
  Tensor logits = uniform_f64({rows, classes}, 8, -2, 2);
  std::vector<double> per = per_row(values(logits), t, 1, 0);
  expect_values_near(F::cross_entropy(logits, from_vector(t, {rows}), F::Reduction::mean, 0.0, 1),
                     {(per[1] + per[3] + per[4]) / 3}, 1e-12);
  // [N, C, d]: targets [N, d], one ignored.
  Tensor x = uniform_f64({2, 3, 2}, 9);
  std::vector<double> v = values(x);
  std::vector<std::int64_t> tv = {0, -100, 1, 2};
  Tensor loss = F::nll_loss(x, from_vector(tv, {2, 2}), F::Reduction::mean);
  double want = -(v[0 * 6 + 0 * 2 + 0] + v[1 * 6 + 1 * 2 + 0] + v[1 * 6 + 2 * 2 + 1]) / 3;
  expect_values_near(loss, {want}, 1e-12);
}

TEST(NnIgnoreIndex, EveryTargetIgnoredGivesNaNForTheMean) {
  for (Device dev : {cpu, device()}) {
    Tensor logits = uniform_f64({3, classes}, 10).to(dev);
    Tensor target = full({3}, -100, dev, i64);
    EXPECT_TRUE(std::isnan(F::cross_entropy(logits, target).item<double>()));
    EXPECT_TRUE(std::isnan(F::nll_loss(logits, target).item<double>()));
    expect_values_near(F::cross_entropy(logits, target, F::Reduction::sum), {0.0});
    expect_values_near(F::cross_entropy(logits, target, F::Reduction::none), {0, 0, 0});
  }
}

TEST(NnIgnoreIndex, GradientsMatchFiniteDifferencesAndVanishAtIgnoredRows) {
  const std::vector<std::int64_t> t = {3, -100, 1, -100, 0};
  for (Device dev : {cpu, device()})
    for (double eps : {0.0, 0.2}) {
      SCOPED_TRACE(testing::Message() << dev << " label_smoothing " << eps);
      Tensor x0 = uniform_f64({rows, classes}, 11, -2, 2);
      Tensor logits = x0.to(dev).requires_grad_();
      Tensor target = from_vector(t, {rows}, dev);
      F::cross_entropy(logits, target, F::Reduction::mean, eps).backward();
      std::vector<double> g = values(logits.grad()), x = values(x0);
      auto loss_at = [&](const std::vector<double>& xs) {
        std::vector<double> per = per_row(xs, t, -100, eps);
        double s = 0;
        for (double v : per) s += v;
        return s / 3;
      };
      const double h = 1e-6;
      for (std::size_t k = 0; k < x.size(); ++k) {
        std::vector<double> up = x, down = x;
        up[k] += h;
        down[k] -= h;
        double fd = (loss_at(up) - loss_at(down)) / (2 * h);
        EXPECT_NEAR(g[k], fd, 1e-7) << "element " << k;
        if (t[k / classes] == -100) EXPECT_EQ(g[k], 0.0) << "element " << k;
      }
    }
}

TEST(NnIgnoreIndex, OutOfRangeTargetsThatAreNotIgnoredStillRaise) {
  Tensor logits = zeros({2, classes});
  EXPECT_THROW(F::nll_loss(logits, from_vector(std::vector<std::int64_t>{-100, 7}, {2})), Error);
  EXPECT_THROW(F::nll_loss(logits, from_vector(std::vector<std::int64_t>{-1, 0}, {2})), Error);
  EXPECT_THROW(F::nll_loss(logits, from_vector(std::vector<std::int64_t>{-100, 0}, {2}), F::Reduction::mean, 0), Error);
  Tensor lazy = F::nll_loss(zeros({2, classes}, device()), from_vector(std::vector<std::int64_t>{-100, 9}, {2}, device()));
  EXPECT_THROW((void)lazy.item<float>(), Error);
  expect_values_near(F::nll_loss(zeros({2, classes}, device()), from_vector(std::vector<std::int64_t>{-100, 1}, {2}, device())),
                     {0.0});
}

}  // namespace
}  // namespace lt::test
