// MultiheadAttention's is_causal with key padding against a plain loop over the projections,
// heads, masked softmax and output projection; and its refusal of masks of the wrong shape or
// dtype.
#include <cmath>
#include <limits>

#include "nn_test_util.hpp"

namespace lt::test {
namespace {

constexpr std::int64_t N = 2, L = 4, E = 4, H = 2, D = E / H;

/// Key j of batch b is padding in batch 1 from key 3 on.
bool padded(std::int64_t b, std::int64_t j) { return b == 1 && j >= 3; }

/// y[n, l, o] = sum_i x[n, l, i] w[o, i] + bias[o] over rows of width `in`.
std::vector<double> affine(const std::vector<double>& x, const std::vector<double>& w, const std::vector<double>& bias,
                           std::int64_t rows, std::int64_t in, std::int64_t out, std::int64_t w_row0 = 0) {
  std::vector<double> y(static_cast<std::size_t>(rows * out));
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t o = 0; o < out; ++o) {
      double acc = bias[static_cast<std::size_t>(w_row0 + o)];
      for (std::int64_t i = 0; i < in; ++i)
        acc += x[static_cast<std::size_t>(r * in + i)] * w[static_cast<std::size_t>((w_row0 + o) * in + i)];
      y[static_cast<std::size_t>(r * out + o)] = acc;
    }
  return y;
}

/// Self-attention of x [N, L, E] (batch first) with a causal mask and the key padding above,
/// by loops; also the head-averaged weights [N, L, L].
std::pair<std::vector<double>, std::vector<double>> attention_loop(const nn::MultiheadAttention& mha,
                                                                   const std::vector<double>& x) {
  std::vector<double> w = values(mha.in_proj_weight), b = values(mha.in_proj_bias);
  std::vector<double> q = affine(x, w, b, N * L, E, E, 0), k = affine(x, w, b, N * L, E, E, E),
                      v = affine(x, w, b, N * L, E, E, 2 * E);
  std::vector<double> heads(static_cast<std::size_t>(N * L * E)), avg(static_cast<std::size_t>(N * L * L), 0.0);
  for (std::int64_t n = 0; n < N; ++n)
    for (std::int64_t h = 0; h < H; ++h)
      for (std::int64_t i = 0; i < L; ++i) {
        std::vector<double> p(L, 0.0);
        double top = -INFINITY, z = 0;
        for (std::int64_t j = 0; j <= i; ++j) {
          if (padded(n, j)) continue;
          double dot = 0;
          for (std::int64_t d = 0; d < D; ++d)
            dot += q[static_cast<std::size_t>((n * L + i) * E + h * D + d)] * k[static_cast<std::size_t>((n * L + j) * E + h * D + d)];
          p[j] = dot / std::sqrt(double(D));
          top = std::max(top, p[j]);
        }
        for (std::int64_t j = 0; j <= i; ++j)
          if (!padded(n, j)) z += (p[j] = std::exp(p[j] - top));
        for (std::int64_t j = 0; j < L; ++j) {
          bool kept = j <= i && !padded(n, j);
          p[j] = kept ? p[j] / z : 0.0;
          avg[static_cast<std::size_t>((n * L + i) * L + j)] += p[j] / H;
        }
        for (std::int64_t d = 0; d < D; ++d) {
          double acc = 0;
          for (std::int64_t j = 0; j < L; ++j) acc += p[j] * v[static_cast<std::size_t>((n * L + j) * E + h * D + d)];
          heads[static_cast<std::size_t>((n * L + i) * E + h * D + d)] = acc;
        }
      }
  return {affine(heads, values(mha.out_proj.weight), values(mha.out_proj.bias), N * L, E, E), avg};
}

Tensor padding_mask(Device dev) {  // [N, S], true = ignore the key
  std::vector<double> m;
  for (std::int64_t n = 0; n < N; ++n)
    for (std::int64_t j = 0; j < L; ++j) m.push_back(padded(n, j));
  return from_vector(m, {N, L}, dev).to(boolean);
}

TEST(NnMhaCausal, CausalAndKeyPaddingMatchALoop) {
  manual_seed(31);
  nn::MultiheadAttention mha(E, H, {.batch_first = true});
  mha.to(f64);
  // Nonzero biases, so that the loop checks where they enter.
  mha.in_proj_bias = uniform_f64({3 * E}, 32);
  mha.out_proj.bias = uniform_f64({E}, 33);
  Tensor x = uniform_f64({N, L, E}, 34);
  auto [expected, expected_weights] = attention_loop(mha, values(x));
  for (Device dev : {cpu, device()}) {
    SCOPED_TRACE(dev.str());
    nn::MultiheadAttention m = mha;
    m.in_proj_weight = mha.in_proj_weight.to(dev);
    m.in_proj_bias = mha.in_proj_bias.to(dev);
    m.out_proj.weight = mha.out_proj.weight.to(dev);
    m.out_proj.bias = mha.out_proj.bias.to(dev);
    Tensor xd = x.to(dev);
    auto [out, weights] = m(xd, xd, xd, padding_mask(dev), true, {}, true, /*is_causal=*/true);
    expect_values_near(out, expected, 1e-12);
    expect_values_near(weights, expected_weights, 1e-12);
    // Without weights (the functional path) and with the causal mask given as the hint's mask.
    auto [out_nw, none] = m(xd, xd, xd, padding_mask(dev), false, {}, true, true);
    EXPECT_FALSE(none.defined());
    expect_values_near(out_nw, expected, 1e-12);
    std::vector<double> above;
    for (std::int64_t i = 0; i < L; ++i)
      for (std::int64_t j = 0; j < L; ++j) above.push_back(j > i);
    Tensor causal = from_vector(above, {L, L}, dev).to(boolean);
    expect_values_near(m(xd, xd, xd, padding_mask(dev), false, causal, true, true).first, expected, 1e-12);
  }
}

TEST(NnMhaCausal, CausalOutputOfARowIgnoresLaterTokens) {
  manual_seed(35);
  nn::MultiheadAttention mha(E, H, {.batch_first = true});
  mha.to(f64);
  Tensor x = uniform_f64({1, L, E}, 36);
  std::vector<double> changed = values(x);
  for (std::int64_t e = 0; e < E; ++e) changed[static_cast<std::size_t>((L - 1) * E + e)] += 1.0;  // the last token
  Tensor y = from_vector(changed, {1, L, E});
  std::vector<double> a = values(mha(x, x, x, {}, false, {}, true, true).first);
  std::vector<double> b = values(mha(y, y, y, {}, false, {}, true, true).first);
  for (std::size_t i = 0; i < static_cast<std::size_t>((L - 1) * E); ++i) EXPECT_NEAR(a[i], b[i], 1e-12) << i;
  double last = 0;
  for (std::size_t i = static_cast<std::size_t>((L - 1) * E); i < a.size(); ++i) last += std::abs(a[i] - b[i]);
  EXPECT_GT(last, 1e-6);
}

TEST(NnMhaCausal, MasksOfTheWrongShapeOrDtypeAreRefused) {
  nn::MultiheadAttention mha(E, H, {.batch_first = true});
  Tensor x = zeros({N, L, E});
  auto refused = [&](const std::optional<Tensor>& padding, const std::optional<Tensor>& mask, const std::string& part) {
    std::string text = error_text([&] { mha(x, x, x, padding, false, mask, true, true); });
    EXPECT_NE(text.find("MultiheadAttention"), std::string::npos) << text;
    EXPECT_NE(text.find(part), std::string::npos) << text;
  };
  refused({}, zeros({L, L + 1}), "attn_mask [4, 5] must be [L, S] = [4, 4]");
  refused({}, zeros({N, L, L}), "attn_mask [2, 4, 4]");
  refused(zeros({N, L + 1}), {}, "key_padding_mask [2, 5] must be [N, S] = [2, 4]");
  refused(zeros({L}), {}, "key_padding_mask [4]");
  refused(zeros({N, L}, cpu, i64), {}, "key_padding_mask [2, 4] must be bool or floating, not i64");
  refused({}, zeros({L, L}, cpu, i32), "attn_mask [4, 4] must be bool or floating, not i32");
  refused({}, Tensor(), "attn_mask undefined");
}

}  // namespace
}  // namespace lt::test
