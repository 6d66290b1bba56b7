// Reference cases of the fused attention op, reached through scaled_dot_product_attention:
// plain loops in f64 over every batch matrix, with and without masks, through the small
// product kernels (wide rows) and the loops that take any strides.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include <lazytensor/nn.hpp>

#include "op_harness.hpp"

namespace lt::test {
namespace {

/// softmax(q k^T * scale + mask) v per batch matrix; `mask` (may be empty) broadcasts from
/// [L, S] or [1, L, S]-style shapes whose trailing two dims are [L, S].
Ref attention_ref(const Ref& q, const Ref& k, const Ref& v, const Ref* mask, DType out) {
  const std::size_t r = q.shape.size();
  const std::int64_t l = q.shape[r - 2], e = q.shape[r - 1], s = k.shape[r - 2], ev = v.shape[r - 1];
  const std::int64_t batches = q.numel() / (l * e);
  const double scale = 1.0 / std::sqrt(static_cast<double>(e));
  std::vector<std::int64_t> shape = q.shape;
  shape[r - 1] = ev;
  Ref y{shape, out, {}};
  for (std::int64_t b = 0; b < batches; ++b)
    for (std::int64_t i = 0; i < l; ++i) {
      std::vector<double> w(static_cast<std::size_t>(s));
      double most = -std::numeric_limits<double>::infinity();
      for (std::int64_t j = 0; j < s; ++j) {
        double acc = 0;
        for (std::int64_t p = 0; p < e; ++p) acc += q.v[static_cast<std::size_t>((b * l + i) * e + p)] * k.v[static_cast<std::size_t>((b * s + j) * e + p)];
        acc *= scale;
        if (mask != nullptr) {  // broadcast over batches: the mask's own batch count divides ours
          const std::int64_t mb = mask->numel() / (l * s);
          acc += mask->v[static_cast<std::size_t>(((b % mb) * l + i) * s + j)];
        }
        w[static_cast<std::size_t>(j)] = acc;
        most = std::max(most, acc);
      }
      double sum = 0;
      for (double& x : w) sum += (x = std::exp(x - most));
      for (std::int64_t c = 0; c < ev; ++c) {
        double acc = 0;
        for (std::int64_t j = 0; j < s; ++j) acc += w[static_cast<std::size_t>(j)] / sum * v.v[static_cast<std::size_t>((b * s + j) * ev + c)];
        y.v.push_back(round_to(out, acc));
      }
    }
  return y;
}

Tensor sdpa(const std::vector<Tensor>& in) {
  return nn::functional::scaled_dot_product_attention(in[0], in[1], in[2], in.size() > 3 ? std::optional<Tensor>(in[3]) : std::nullopt);
}

}  // namespace

LT_OP_TEST(attention) {
  CaseList cases;
  struct Conf {
    std::string label;
    std::vector<std::int64_t> q, k, v;
  };
  const std::vector<Conf> confs = {{"one matrix", {5, 4}, {6, 4}, {6, 3}},
                                   {"batch and heads", {2, 3, 5, 4}, {2, 3, 6, 4}, {2, 3, 6, 7}},
                                   {"wide rows: the small-product kernels", {2, 70, 32}, {2, 90, 32}, {2, 90, 20}},
                                   {"rows past one block", {1, 200, 16}, {1, 300, 16}, {1, 300, 16}}};
  std::uint32_t seed = 500;
  for (const Conf& c : confs) {
    Ref q = random_ref(c.q, DType::f32, seed++), k = random_ref(c.k, DType::f32, seed++), v = random_ref(c.v, DType::f32, seed++);
    cases.push_back({"f32 " + c.label, {q, k, v}, sdpa, attention_ref(q, k, v, nullptr, DType::f32), 1e-4, 1e-5});
  }
  {
    Ref q = random_ref({2, 5, 4}, DType::f32, 600), k = random_ref({2, 6, 4}, DType::f32, 601), v = random_ref({2, 6, 3}, DType::f32, 602);
    Ref mask = random_ref({5, 6}, DType::f32, 603);
    mask.v[3] = -std::numeric_limits<double>::infinity();  // a key left out of one query's row
    cases.push_back({"f32, additive [L, S] mask with -inf", {q, k, v, mask}, sdpa, attention_ref(q, k, v, &mask, DType::f32), 1e-4, 1e-5});
    Ref causal = values_ref({5, 6}, DType::f32, {});
    for (int i = 0; i < 5; ++i)
      for (int j = 0; j < 6; ++j) causal.v.push_back(j <= i ? 0.0 : -std::numeric_limits<double>::infinity());
    cases.push_back({"f32, is_causal", {q, k, v},
                     [](const std::vector<Tensor>& in) {
                       return nn::functional::scaled_dot_product_attention(in[0], in[1], in[2], std::nullopt, 0.0, true);
                     },
                     attention_ref(q, k, v, &causal, DType::f32), 1e-4, 1e-5});
  }
  Ref q = random_ref({3, 4, 5}, DType::f64, 700), k = random_ref({3, 6, 5}, DType::f64, 701), v = random_ref({3, 6, 2}, DType::f64, 702);
  cases.push_back({"f64", {q, k, v}, sdpa, attention_ref(q, k, v, nullptr, DType::f64), 1e-12, 1e-12});
  // bf16 operands take the composite path (products, softmax, product), each op rounding to
  // bf16 as PyTorch's math path does, not the fused op's single rounding this reference models.
  for (OpCase& c : cases) c.low_precision_variant = false;
  return cases;
}

}  // namespace lt::test
