// linear, softmax, log_softmax, layer_norm and batch_norm against plain-loop references, on
// both devices.
#include <gtest/gtest.h>

#include "op_harness.hpp"

namespace lt::test {
namespace {

std::vector<double> values(const Tensor& t) { return t.to_vector<double>(); }

void expect_near_all(const std::vector<double>& got, const std::vector<double>& want, double tol) {
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t k = 0; k < got.size(); ++k) EXPECT_NEAR(got[k], want[k], tol) << "element " << k;
}

class NnComposite : public ::testing::TestWithParam<Device> {};

TEST_P(NnComposite, LinearIsMatmulPlusBias) {
  Ref x = random_ref({2, 3, 4}, DType::f64, 1), w = random_ref({5, 4}, DType::f64, 2), b = random_ref({5}, DType::f64, 3);
  Tensor y = linear(to_tensor(x).to(GetParam()), to_tensor(w).to(GetParam()), to_tensor(b).to(GetParam()));
  std::vector<double> want;
  for (int r = 0; r < 6; ++r)
    for (int o = 0; o < 5; ++o) {
      double acc = b.v[static_cast<std::size_t>(o)];
      for (int i = 0; i < 4; ++i) acc += x.v[static_cast<std::size_t>(r * 4 + i)] * w.v[static_cast<std::size_t>(o * 4 + i)];
      want.push_back(acc);
    }
  EXPECT_EQ(y.sizes(), (std::vector<std::int64_t>{2, 3, 5}));
  expect_near_all(values(y), want, 1e-12);
}

TEST_P(NnComposite, SoftmaxAndLogSoftmaxAreStable) {
  Ref x = values_ref({3, 4}, DType::f64, {1, 2, 3, 4, 1000, 1001, 1002, 1003, -INFINITY, 0, 1, -INFINITY});
  Tensor t = to_tensor(x).to(GetParam());
  Tensor s = softmax(t, 1), ls = log_softmax(t, -1);
  std::vector<double> want_s, want_ls;
  for (int r = 0; r < 3; ++r) {
    double m = -INFINITY, z = 0;
    for (int c = 0; c < 4; ++c) m = std::max(m, x.v[static_cast<std::size_t>(r * 4 + c)]);
    for (int c = 0; c < 4; ++c) z += std::exp(x.v[static_cast<std::size_t>(r * 4 + c)] - m);
    for (int c = 0; c < 4; ++c) {
      double v = x.v[static_cast<std::size_t>(r * 4 + c)];
      want_s.push_back(std::exp(v - m) / z);
      want_ls.push_back(v - m - std::log(z));
    }
  }
  expect_near_all(values(s), want_s, 1e-12);
  std::vector<double> got_ls = values(ls);
  for (std::size_t k = 0; k < got_ls.size(); ++k) {
    if (std::isinf(want_ls[k])) EXPECT_EQ(got_ls[k], want_ls[k]);
    else EXPECT_NEAR(got_ls[k], want_ls[k], 1e-12);
  }
}

TEST_P(NnComposite, LayerNormOverTrailingDims) {
  Ref x = random_ref({2, 3, 4}, DType::f64, 4), w = random_ref({3, 4}, DType::f64, 5), b = random_ref({3, 4}, DType::f64, 6);
  Device dev = GetParam();
  Tensor y = layer_norm(to_tensor(x).to(dev), {3, 4}, to_tensor(w).to(dev), to_tensor(b).to(dev), 1e-5);
  std::vector<double> want;
  for (int n = 0; n < 2; ++n) {
    double mu = 0, var = 0;
    for (int k = 0; k < 12; ++k) mu += x.v[static_cast<std::size_t>(n * 12 + k)] / 12;
    for (int k = 0; k < 12; ++k) var += std::pow(x.v[static_cast<std::size_t>(n * 12 + k)] - mu, 2) / 12;
    for (int k = 0; k < 12; ++k)
      want.push_back((x.v[static_cast<std::size_t>(n * 12 + k)] - mu) / std::sqrt(var + 1e-5) * w.v[static_cast<std::size_t>(k)] +
                     b.v[static_cast<std::size_t>(k)]);
  }
  expect_near_all(values(y), want, 1e-10);
  EXPECT_THROW(layer_norm(to_tensor(x).to(dev), {4, 3}), Error);
}

TEST_P(NnComposite, BatchNormTrainingUpdatesRunningStatsEvalUsesThem) {
  Device dev = GetParam();
  Ref x = random_ref({4, 2, 3}, DType::f64, 7);
  Tensor rm = zeros({2}, dev, DType::f64), rv = ones({2}, dev, DType::f64);
  Tensor alias = rm;  // the update is in place: every handle sees it
  Tensor y = batch_norm(to_tensor(x).to(dev), rm, rv, std::nullopt, std::nullopt, true, 0.1, 1e-5);
  if (dev.is_lazy()) sync(dev);
  std::vector<double> mean(2, 0), var(2, 0), want;
  for (int c = 0; c < 2; ++c) {
    for (int n = 0; n < 4; ++n)
      for (int k = 0; k < 3; ++k) mean[static_cast<std::size_t>(c)] += x.v[static_cast<std::size_t>((n * 2 + c) * 3 + k)] / 12;
    for (int n = 0; n < 4; ++n)
      for (int k = 0; k < 3; ++k)
        var[static_cast<std::size_t>(c)] += std::pow(x.v[static_cast<std::size_t>((n * 2 + c) * 3 + k)] - mean[static_cast<std::size_t>(c)], 2) / 12;
  }
  for (int n = 0; n < 4; ++n)
    for (int c = 0; c < 2; ++c)
      for (int k = 0; k < 3; ++k)
        want.push_back((x.v[static_cast<std::size_t>((n * 2 + c) * 3 + k)] - mean[static_cast<std::size_t>(c)]) /
                       std::sqrt(var[static_cast<std::size_t>(c)] + 1e-5));
  expect_near_all(values(y), want, 1e-10);
  std::vector<double> want_rm, want_rv;
  for (int c = 0; c < 2; ++c) {
    want_rm.push_back(0.1 * mean[static_cast<std::size_t>(c)]);
    want_rv.push_back(0.9 + 0.1 * var[static_cast<std::size_t>(c)] * 12.0 / 11.0);  // unbiased
  }
  expect_near_all(values(alias), want_rm, 1e-12);
  expect_near_all(values(rv), want_rv, 1e-12);
  Tensor e = batch_norm(to_tensor(x).to(dev), rm, rv);  // eval: running statistics
  std::vector<double> want_e;
  for (int n = 0; n < 4; ++n)
    for (int c = 0; c < 2; ++c)
      for (int k = 0; k < 3; ++k)
        want_e.push_back((x.v[static_cast<std::size_t>((n * 2 + c) * 3 + k)] - want_rm[static_cast<std::size_t>(c)]) /
                         std::sqrt(want_rv[static_cast<std::size_t>(c)] + 1e-5));
  expect_near_all(values(e), want_e, 1e-10);
}

INSTANTIATE_TEST_SUITE_P(Devices, NnComposite, ::testing::Values(cpu, device()),
                         [](const auto& info) { return info.param.is_lazy() ? std::string("lazy") : std::string("cpu"); });

}  // namespace
}  // namespace lt::test
