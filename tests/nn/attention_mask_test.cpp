// scaled_dot_product_attention with PyTorch's masks (bool: true attends; floating: added) and
// is_causal, against a plain loop and finite differences; and its checks of the mask.
#include <cmath>
#include <functional>
#include <limits>

#include "nn_test_util.hpp"

namespace lt::test {
namespace {

namespace F = nn::functional;

constexpr std::int64_t B = 2, H = 2, L = 3, S = 5, E = 4, Ev = 2;

/// The additive mask term of (batch b, head h, query i, key j): 0, a value, or -inf.
using MaskFn = std::function<double(std::int64_t, std::int64_t, std::int64_t, std::int64_t)>;

/// softmax(q k^T * scale + mask) v by loops over q [B, H, L, E], k [B, H, S, E], v [B, H, S, Ev].
std::vector<double> attention_loop(const std::vector<double>& q, const std::vector<double>& k,
                                   const std::vector<double>& v, const MaskFn& mask, double scale) {
  std::vector<double> out(B * H * L * Ev);
  for (std::int64_t b = 0; b < B; ++b)
    for (std::int64_t h = 0; h < H; ++h)
      for (std::int64_t i = 0; i < L; ++i) {
        std::vector<double> s(S);
        double top = -INFINITY;
        for (std::int64_t j = 0; j < S; ++j) {
          double dot = 0;
          for (std::int64_t e = 0; e < E; ++e) dot += q[((b * H + h) * L + i) * E + e] * k[((b * H + h) * S + j) * E + e];
          s[j] = dot * scale + mask(b, h, i, j);
          top = std::max(top, s[j]);
        }
        double z = 0;
        for (double& x : s) z += (x = std::exp(x - top));
        for (std::int64_t c = 0; c < Ev; ++c) {
          double acc = 0;
          for (std::int64_t j = 0; j < S; ++j) acc += s[j] / z * v[((b * H + h) * S + j) * Ev + c];
          out[((b * H + h) * L + i) * Ev + c] = acc;
        }
      }
  return out;
}

const double neg_inf = -std::numeric_limits<double>::infinity();
const double default_scale = 1 / std::sqrt(double(E));

/// Key padding: batch 0 sees every key, batch 1 the first three.
bool key_kept(std::int64_t b, std::int64_t j) { return b == 0 || j < 3; }
Tensor padding_mask(Device dev) {  // [B, 1, 1, S], true = attend
  std::vector<std::uint8_t> m;
  for (std::int64_t b = 0; b < B; ++b)
    for (std::int64_t j = 0; j < S; ++j) m.push_back(key_kept(b, j));
  return from_vector(std::vector<double>(m.begin(), m.end()), {B, 1, 1, S}, dev).to(boolean);
}
double float_mask_at(std::int64_t i, std::int64_t j) { return 0.3 * double(i) - 0.2 * double(j); }

struct Inputs {
  Tensor q = uniform_f64({B, H, L, E}, 21), k = uniform_f64({B, H, S, E}, 22), v = uniform_f64({B, H, S, Ev}, 23);
};

TEST(NnAttentionMask, MasksAndCausalMatchLoops) {
  Inputs in;
  std::vector<double> q = values(in.q), k = values(in.k), v = values(in.v);
  std::vector<double> fm;
  for (std::int64_t i = 0; i < L; ++i)
    for (std::int64_t j = 0; j < S; ++j) fm.push_back(float_mask_at(i, j));
  for (Device dev : {cpu, device()}) {
    SCOPED_TRACE(dev.str());
    Tensor qd = in.q.to(dev), kd = in.k.to(dev), vd = in.v.to(dev);
    auto none = [](auto...) { return 0.0; };
    expect_values_near(F::scaled_dot_product_attention(qd, kd, vd), attention_loop(q, k, v, none, default_scale), 1e-12);
    expect_values_near(F::scaled_dot_product_attention(qd, kd, vd, {}, 0.0, false, 0.7),
                       attention_loop(q, k, v, none, 0.7), 1e-12);
    expect_values_near(F::scaled_dot_product_attention(qd, kd, vd, padding_mask(dev)),
                       attention_loop(q, k, v, [](auto b, auto, auto, auto j) { return key_kept(b, j) ? 0.0 : neg_inf; },
                                      default_scale),
                       1e-12);
    expect_values_near(F::scaled_dot_product_attention(qd, kd, vd, from_vector(fm, {L, S}, dev)),
                       attention_loop(q, k, v, [](auto, auto, auto i, auto j) { return float_mask_at(i, j); }, default_scale),
                       1e-12);
    // Causal: query i attends keys 0..i (top left aligned, also when S > L).
    expect_values_near(F::scaled_dot_product_attention(qd, kd, vd, {}, 0.0, true),
                       attention_loop(q, k, v, [](auto, auto, auto i, auto j) { return j <= i ? 0.0 : neg_inf; },
                                      default_scale),
                       1e-12);
  }
}

TEST(NnAttentionMask, ARowThatMayAttendToNothingIsNaN) {
  Inputs in;
  std::vector<double> allowed(L * S, 1.0);
  for (std::int64_t j = 0; j < S; ++j) allowed[1 * S + j] = 0;  // query 1 sees nothing
  Tensor mask = from_vector(allowed, {L, S}).to(boolean);
  std::vector<double> out = values(F::scaled_dot_product_attention(in.q, in.k, in.v, mask));
  for (std::int64_t b = 0; b < B * H; ++b)
    for (std::int64_t i = 0; i < L; ++i)
      for (std::int64_t c = 0; c < Ev; ++c) EXPECT_EQ(std::isnan(out[(b * L + i) * Ev + c]), i == 1);
}

/// Central differences of sum(w * attention(q, k, v)) with respect to `which` input.
void expect_gradients(Device dev, const std::function<Tensor(const Tensor&, const Tensor&, const Tensor&)>& f) {
  Inputs in;
  Tensor w = uniform_f64({B, H, L, Ev}, 24);
  std::vector<Tensor> base = {in.q, in.k, in.v};
  std::vector<Tensor> leaves;
  for (const Tensor& t : base) leaves.push_back(t.to(dev).requires_grad_());
  Tensor(f(leaves[0], leaves[1], leaves[2]) * w.to(dev)).sum().backward();
  auto loss_at = [&](std::size_t which, std::size_t at, double delta) {
    std::vector<Tensor> xs = base;
    std::vector<double> vals = values(xs[which]);
    vals[at] += delta;
    xs[which] = from_vector(vals, xs[which].shape());
    return Tensor(f(xs[0], xs[1], xs[2]) * w).sum().item<double>();
  };
  const double h = 1e-6;
  for (std::size_t which = 0; which < 3; ++which) {
    std::vector<double> g = values(leaves[which].grad());
    for (std::size_t at = 0; at < g.size(); ++at) {
      double fd = (loss_at(which, at, h) - loss_at(which, at, -h)) / (2 * h);
      EXPECT_NEAR(g[at], fd, 1e-7) << "input " << which << " element " << at;
    }
  }
}

TEST(NnAttentionMask, GradientsMatchFiniteDifferences) {
  for (Device dev : {cpu, device()}) {
    SCOPED_TRACE(dev.str());
    expect_gradients(dev, [](const Tensor& q, const Tensor& k, const Tensor& v) {
      return F::scaled_dot_product_attention(q, k, v, {}, 0.0, true);
    });
    expect_gradients(dev, [](const Tensor& q, const Tensor& k, const Tensor& v) {
      return F::scaled_dot_product_attention(q, k, v, padding_mask(q.device()));
    });
    expect_gradients(dev, [](const Tensor& q, const Tensor& k, const Tensor& v) {
      return F::scaled_dot_product_attention(q, k, v, Tensor(full({L, S}, -0.5, q.device(), f64) * arange(S, q.device(), f64)));
    });
  }
}

TEST(NnAttentionMask, BadMasksRaiseNamingTheOpAndShapes) {
  Inputs in;
  std::string m = error_text([&] { F::scaled_dot_product_attention(in.q, in.k, in.v, ones({L, S + 1}).to(boolean)); });
  EXPECT_NE(m.find("scaled_dot_product_attention"), std::string::npos) << m;
  EXPECT_NE(m.find("attn_mask [3, 6] does not broadcast to the scores [2, 2, 3, 5]"), std::string::npos) << m;
  m = error_text([&] { F::scaled_dot_product_attention(in.q, in.k, in.v, ones({3, 1, 1, S}).to(boolean)); });
  EXPECT_NE(m.find("does not broadcast"), std::string::npos) << m;
  m = error_text([&] { F::scaled_dot_product_attention(in.q, in.k, in.v, zeros({L, S}, cpu, i64)); });
  EXPECT_NE(m.find("attn_mask must be bool or of the query's dtype f64, not i64"), std::string::npos) << m;
  EXPECT_THROW(F::scaled_dot_product_attention(in.q, in.k, in.v, zeros({L, S}, cpu, f32)), Error);
  EXPECT_THROW(F::scaled_dot_product_attention(in.q, in.k, in.v, ones({L, S}).to(boolean), 0.0, true), Error);
  EXPECT_THROW(F::scaled_dot_product_attention(in.q, in.k, in.v, {}, 1.5), Error);
  EXPECT_THROW(F::scaled_dot_product_attention(in.q, in.k, zeros({B, H, S + 1, Ev}, cpu, f64)), Error);
}

TEST(NnAttentionMask, DropoutOfEverythingGivesZeros) {
  Inputs in;
  expect_values_near(F::scaled_dot_product_attention(in.q, in.k, in.v, {}, 1.0), std::vector<double>(B * H * L * Ev, 0.0));
}

}  // namespace
}  // namespace lt::test
