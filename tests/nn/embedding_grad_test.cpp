// Embedding's gradient scatter-adds: repeated ids accumulate into one row, against a loop and
// finite differences, on the eager and the lazy device.
#include "nn_test_util.hpp"

namespace lt::test {
namespace {

TEST(NnEmbeddingGrad, RepeatedIdsAccumulate) {
  constexpr std::int64_t V = 5, E = 3;
  const std::vector<std::int64_t> id_values{1, 3, 1, 1, 0, 3};
  const std::int64_t n = static_cast<std::int64_t>(id_values.size());
  Tensor table = uniform_f64({V, E}, 51), up = uniform_f64({2, n / 2, E}, 52);
  std::vector<double> tv = values(table), uv = values(up);
  // The loop: row v's gradient is the sum of the upstream rows of every position holding v.
  std::vector<double> expected(static_cast<std::size_t>(V * E), 0.0);
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t e = 0; e < E; ++e)
      expected[static_cast<std::size_t>(id_values[static_cast<std::size_t>(i)] * E + e)] += uv[static_cast<std::size_t>(i * E + e)];
  Tensor ids = from_vector(id_values, {2, n / 2});
  auto loss_at = [&](std::size_t at, double delta) {
    std::vector<double> w = tv;
    w[at] += delta;
    return Tensor(nn::functional::embedding(from_vector(w, {V, E}), ids) * up).sum().item<double>();
  };
  for (Device dev : {cpu, device()}) {
    SCOPED_TRACE(dev.str());
    Tensor w = table.to(dev).requires_grad_();
    Tensor(nn::functional::embedding(w, ids.to(dev)) * up.to(dev)).sum().backward();
    expect_values_near(w.grad(), expected, 1e-12);
    std::vector<double> g = values(w.grad());
    for (std::size_t at = 0; at < g.size(); ++at)
      EXPECT_NEAR(g[at], (loss_at(at, 1e-6) - loss_at(at, -1e-6)) / 2e-6, 1e-7) << "element " << at;
  }
  // The module's table gets the same.
  nn::Embedding m(V, E);
  m.to(f64);
  {
    no_grad guard;
    m.weight.assign(table);
  }
  Tensor(m(ids) * up).sum().backward();
  expect_values_near(m.weight.grad(), expected, 1e-12);
}

}  // namespace
}  // namespace lt::test
