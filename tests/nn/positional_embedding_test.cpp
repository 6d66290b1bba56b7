// PositionalEmbedding against a loop and finite differences, its refusal of a sequence longer
// than its table; Embedding's refusal of token ids out of range.
#include "nn_test_util.hpp"

namespace lt::test {
namespace {

constexpr std::int64_t P = 6, E = 3;

TEST(NnPositionalEmbedding, AddsTheFirstRowsAndTheirGradientsByFiniteDifferences) {
  manual_seed(41);
  nn::PositionalEmbedding pos(P, E);
  pos.to(f64);
  Tensor table = pos.weight.detach();
  Tensor x = uniform_f64({2, 4, E}, 42), up = uniform_f64({2, 4, E}, 43);
  std::vector<double> xv = values(x), tv = values(table), uv = values(up);
  std::vector<double> expected;
  for (std::int64_t n = 0; n < 2; ++n)
    for (std::int64_t t = 0; t < 4; ++t)
      for (std::int64_t e = 0; e < E; ++e) expected.push_back(xv[static_cast<std::size_t>((n * 4 + t) * E + e)] + tv[static_cast<std::size_t>(t * E + e)]);
  for (Device dev : {cpu, device()}) {
    SCOPED_TRACE(dev.str());
    nn::PositionalEmbedding p = pos;
    p.weight = table.to(dev).requires_grad_();
    Tensor y = p(x.to(dev));
    expect_values_near(y, expected, 1e-12);
    Tensor(y * up.to(dev)).sum().backward();
    std::vector<double> g = values(p.weight.grad());
    // d/dW[t, e] of sum(up * (x + W[t])) = sum over the batch of up[:, t, e]; 0 past the sequence.
    auto loss_at = [&](std::size_t at, double delta) {
      std::vector<double> w = tv;
      w[at] += delta;
      nn::PositionalEmbedding q = pos;
      q.weight = from_vector(w, {P, E});
      return Tensor(q(x) * up).sum().item<double>();
    };
    for (std::size_t at = 0; at < g.size(); ++at) {
      double fd = (loss_at(at, 1e-6) - loss_at(at, -1e-6)) / 2e-6;
      EXPECT_NEAR(g[at], fd, 1e-7) << "element " << at;
      std::int64_t t = static_cast<std::int64_t>(at) / E, e = static_cast<std::int64_t>(at) % E;
      double loop = t < 4 ? uv[static_cast<std::size_t>(t * E + e)] + uv[static_cast<std::size_t>((4 + t) * E + e)] : 0.0;
      EXPECT_NEAR(g[at], loop, 1e-12) << "element " << at;
    }
  }
}

TEST(NnPositionalEmbedding, ASequenceLongerThanTheTableIsRefused) {
  nn::PositionalEmbedding pos(P, E);
  std::string text = error_text([&] { pos(zeros({2, P + 1, E})); });
  EXPECT_NE(text.find("PositionalEmbedding"), std::string::npos) << text;
  EXPECT_NE(text.find("a sequence of length 7 does not fit the positional table of 6 positions [6, 3]"),
            std::string::npos) << text;
  text = error_text([&] { pos(zeros({2, 4, E + 1})); });
  EXPECT_NE(text.find("expected [*, L, 3], got [2, 4, 4]"), std::string::npos) << text;
  EXPECT_NE(error_text([&] { pos(zeros({E})); }), "no error");
  EXPECT_NE(error_text([&] { nn::PositionalEmbedding(0, E); }), "no error");
  EXPECT_EQ(pos(zeros({P, E})).shape(), (Shape{P, E}));  // unbatched; the full table fits
}

TEST(NnPositionalEmbedding, TokenIdsOutOfRangeAreRefused) {
  nn::Embedding tok(5, E);
  for (Device dev : {cpu, device()}) {
    SCOPED_TRACE(dev.str());
    nn::Embedding t = tok;
    t.weight = tok.weight.detach().to(dev);
    for (std::int64_t bad : {5, -1}) {
      std::string text = error_text([&] {
        Tensor y = t(from_vector(std::vector<std::int64_t>{0, bad, 2}, {3}).to(dev));
        y.to_vector<float>();
      });
      EXPECT_NE(text.find("index_select"), std::string::npos) << text;
      EXPECT_NE(text.find(std::to_string(bad)), std::string::npos) << text;
    }
    // The device stays usable.
    EXPECT_EQ(t(from_vector(std::vector<std::int64_t>{4}, {1}).to(dev)).shape(), (Shape{1, E}));
  }
}

}  // namespace
}  // namespace lt::test
