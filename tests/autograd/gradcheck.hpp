#pragma once
// Gradient checks by central finite differences in f64. A case gives inputs (the ones to
// differentiate and fixed ones such as indices) and a call of the library; the check backs
// the loss sum(out * w) for fixed random weights w through the call on a device, and compares
// every input's gradient with (loss(x + e) - loss(x - e)) / 2e computed on the eager device.
#include <cmath>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "../ops/op_harness.hpp"

namespace lt::test {

struct GradInput {
  Ref value;
  bool differentiable = true;
};

struct GradCase {
  std::string label;
  std::vector<GradInput> inputs;
  std::function<Tensor(const std::vector<Tensor>&)> run;
  double eps = 1e-6;
  double rtol = 1e-5;
  double atol = 1e-6;
  bool strided_variant = true;  // also run with each differentiable input read through a strided view
};
using GradCaseList = std::vector<GradCase>;

/// A differentiable f64 input of `shape`, uniform in [lo, hi).
inline GradInput var(std::vector<std::int64_t> shape, std::uint32_t seed, double lo = -2, double hi = 2) {
  return {random_ref(std::move(shape), DType::f64, seed, lo, hi), true};
}
/// A differentiable f64 input holding `v`.
inline GradInput var_of(std::vector<std::int64_t> shape, std::vector<double> v) {
  return {values_ref(std::move(shape), DType::f64, std::move(v)), true};
}
/// An input that takes no gradient (indices, conditions).
inline GradInput fixed(Ref r) { return {std::move(r), false}; }

inline std::map<OpId, std::function<GradCaseList()>>& grad_table() {
  static std::map<OpId, std::function<GradCaseList()>> table;
  return table;
}
inline bool register_grad_test(OpId id, std::function<GradCaseList()> cases) {
  grad_table()[id] = std::move(cases);
  return true;
}

namespace detail_grad {

/// The Ref with its last dim doubled, originals at even positions (as the op table's strided
/// variant): the call reads it through slice(-1, 0, end, 2), a non-contiguous view.
inline Ref doubled(const Ref& r) {
  Ref d = r;
  d.shape.back() *= 2;
  d.v.clear();
  for (double x : r.v) d.v.insert(d.v.end(), {x, 0.25});
  return d;
}

inline bool makes_strided(const GradInput& in, bool strided) {
  return strided && in.differentiable && !in.value.shape.empty() && in.value.shape.back() > 0;
}

/// The call's inputs on `dev` from `values`; differentiable ones require grad when `track`.
inline std::vector<Tensor> leaves(const GradCase& c, const std::vector<Ref>& values, bool strided, Device dev,
                                  bool track) {
  std::vector<Tensor> out;
  for (std::size_t k = 0; k < values.size(); ++k) {
    Tensor t = to_tensor(values[k]).to(dev);
    if (track && c.inputs[k].differentiable) t.requires_grad_();
    out.push_back(t);
  }
  return out;
}

inline std::vector<Tensor> views(const GradCase& c, const std::vector<Tensor>& leaves, bool strided) {
  std::vector<Tensor> out;
  for (std::size_t k = 0; k < leaves.size(); ++k)
    out.push_back(makes_strided(c.inputs[k], strided) ? leaves[k].slice(-1, 0, std::nullopt, 2) : leaves[k]);
  return out;
}

inline double loss_on_cpu(const GradCase& c, const std::vector<Ref>& values, bool strided, const Ref& weights) {
  no_grad guard;
  Tensor out = c.run(views(c, leaves(c, values, strided, cpu, false), strided));
  return (out.to(DType::f64) * to_tensor(weights)).sum().item<double>();
}

}  // namespace detail_grad

/// Checks every differentiable input's gradient of case `c` on `dev`.
inline void check_gradients(const GradCase& c, Device dev, bool strided) {
  using namespace detail_grad;
  SCOPED_TRACE(c.label + (strided ? " [strided]" : "") + " on " + dev.str());
  std::vector<Ref> values;
  for (const GradInput& in : c.inputs) values.push_back(makes_strided(in, strided) ? doubled(in.value) : in.value);

  std::vector<Tensor> inputs = leaves(c, values, strided, dev, true);
  Tensor out = c.run(views(c, inputs, strided));
  ASSERT_TRUE(is_floating(out.dtype()));
  ASSERT_TRUE(out.requires_grad()) << "the result does not require grad";
  Ref weights = random_ref(out.sizes(), DType::f64, 99, -1, 1);
  (out.to(DType::f64) * to_tensor(weights).to(dev)).sum().backward();
  if (dev.is_lazy()) sync(dev);

  for (std::size_t k = 0; k < values.size(); ++k) {
    if (!c.inputs[k].differentiable) {
      EXPECT_FALSE(inputs[k].grad().defined()) << "input " << k << " takes no gradient";
      continue;
    }
    const Tensor& g = inputs[k].grad();
    std::vector<double> analytic = g.defined() ? g.to_vector<double>() : std::vector<double>(values[k].v.size(), 0.0);
    ASSERT_EQ(analytic.size(), values[k].v.size()) << "input " << k;
    if (g.defined()) {
      EXPECT_EQ(g.sizes(), inputs[k].sizes()) << "input " << k;
      EXPECT_EQ(g.dtype(), inputs[k].dtype()) << "input " << k;
    }
    for (std::size_t j = 0; j < analytic.size(); ++j) {
      std::vector<Ref> plus = values, minus = values;
      plus[k].v[j] += c.eps;
      minus[k].v[j] -= c.eps;
      double numeric = (loss_on_cpu(c, plus, strided, weights) - loss_on_cpu(c, minus, strided, weights)) / (2 * c.eps);
      EXPECT_NEAR(analytic[j], numeric, c.atol + c.rtol * std::abs(numeric)) << "input " << k << ", element " << j;
    }
  }
}

/// Both devices, plain and strided.
inline void check_gradients(const GradCase& c) {
  for (bool strided : {false, true}) {
    if (strided && !c.strided_variant) continue;
    for (Device dev : {cpu, device()}) check_gradients(c, dev, strided);
  }
}

}  // namespace lt::test

/// Registers the gradient cases of one op: LT_GRAD_TEST(add) { return {case, ...}; }
#define LT_GRAD_TEST(op)                                                                        \
  static ::lt::test::GradCaseList LT_TEST_CONCAT(lt_grad_cases_, op)();                         \
  [[maybe_unused]] static const bool LT_TEST_CONCAT(lt_grad_registered_, op) =                 \
      ::lt::test::register_grad_test(::lt::OpId::op, &LT_TEST_CONCAT(lt_grad_cases_, op));      \
  static ::lt::test::GradCaseList LT_TEST_CONCAT(lt_grad_cases_, op)()
