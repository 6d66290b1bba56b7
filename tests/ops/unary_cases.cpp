// Reference cases of the unary elementwise ops. Expected values are plain std:: math in f64 on
// the inputs as stored, rounded to the result dtype; semantics follow PyTorch's CPU kernels.
#include <algorithm>
#include <cmath>
#include <functional>
#include <numbers>
#include <optional>
#include <string>

#include "op_harness.hpp"

namespace lt::test {
namespace {

using Fn1 = std::function<double(double)>;
using Call1 = std::function<Tensor(const Tensor&)>;

constexpr double nan_value = std::numeric_limits<double>::quiet_NaN();

OpCase unary_case(std::string label, const Ref& x, const Call1& op, DType out, const Fn1& ref) {
  return {std::move(label), {x}, [op](const std::vector<Tensor>& in) { return op(in[0]); },
          ref_map(out, [ref](const std::vector<double>& a) { return ref(a[0]); }, {x})};
}

/// f64 results are computed by the same libm in the same type, so they agree to rounding.
OpCase tight(OpCase c) {
  c.rtol = 1e-12;
  c.atol = 1e-14;
  return c;
}

/// The cases every float-valued op shares: f32 of several ranks, size 0, NaN and ±inf, f64,
/// and integer and bool inputs, which compute in f32 (PyTorch's default float).
CaseList float_op_cases(const Call1& op, const Fn1& ref, double lo = -2, double hi = 2) {
  return {unary_case("f32 [3, 5]", random_ref({3, 5}, f32, 1, lo, hi), op, f32, ref),
          unary_case("f32 rank 0", random_ref({}, f32, 2, lo, hi), op, f32, ref),
          unary_case("f32 [2, 3, 4]", random_ref({2, 3, 4}, f32, 3, lo, hi), op, f32, ref),
          unary_case("f32 [170, 201], several parallel blocks", random_ref({170, 201}, f32, 8, lo, hi), op, f32, ref),
          unary_case("size 0", random_ref({0, 3}), op, f32, ref),
          unary_case("NaN and infinities", special_ref(), op, f32, ref),
          tight(unary_case("f64 [2, 3]", random_ref({2, 3}, f64, 4, lo, hi), op, f64, ref)),
          tight(unary_case("f64 specials", special_ref(f64), op, f64, ref)),
          unary_case("i32 computes in f32", random_ref({7}, i32, 5, std::ceil(lo), std::floor(hi)), op, f32, ref),
          unary_case("i64 computes in f32", random_ref({2, 2}, i64, 6, std::ceil(lo), std::floor(hi)), op, f32, ref),
          unary_case("bool computes in f32", random_ref({6}, boolean, 7), op, f32, ref)};
}

/// Ops whose result keeps the input dtype; bool operands are not allowed.
CaseList same_dtype_cases(const Call1& op, const Fn1& ref) {
  return {unary_case("f32 [3, 5]", random_ref({3, 5}, f32, 11), op, f32, ref),
          unary_case("f32 rank 0", random_ref({}, f32, 12), op, f32, ref),
          unary_case("size 0", random_ref({0, 3}), op, f32, ref),
          unary_case("NaN and infinities", special_ref(), op, f32, ref),
          tight(unary_case("f64 specials", special_ref(f64), op, f64, ref)),
          unary_case("i32 stays i32", random_ref({2, 4}, i32, 13, -9, 9), op, i32, ref),
          unary_case("i64 stays i64", random_ref({5}, i64, 14, -1000, 1000), op, i64, ref)};
}

double sigmoid_ref(double x) { return 1 / (1 + std::exp(-x)); }
double gelu_erf_ref(double x) { return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0))); }
double gelu_tanh_ref(double x) {
  return 0.5 * x * (1 + std::tanh(std::sqrt(2 / std::numbers::pi) * (x + 0.044715 * x * x * x)));
}
double sign_ref(double x) { return x > 0 ? 1 : x < 0 ? -1 : 0; }  // NaN -> 0, as PyTorch's CPU kernel
/// Half to even without the library's rounding: the nearer integer, ties to the even one.
double round_half_even_ref(double x) {
  if (!std::isfinite(x)) return x;
  double f = std::floor(x), diff = x - f;
  if (diff > 0.5) return f + 1;
  if (diff < 0.5) return f;
  return std::fmod(f, 2.0) == 0 ? f : f + 1;
}

}  // namespace

LT_OP_TEST(neg) {
  return same_dtype_cases([](const Tensor& x) { return -x; }, [](double x) { return -x; });
}

LT_OP_TEST(abs) {
  CaseList c = same_dtype_cases([](const Tensor& x) { return x.abs(); }, [](double x) { return std::fabs(x); });
  c.push_back(unary_case("int64 large", values_ref({3}, i64, {-4000000000.0, 3, -7}), [](const Tensor& x) { return lt::abs(x); },
                         i64, [](double x) { return std::fabs(x); }));
  return c;
}

LT_OP_TEST(exp) {
  auto op = [](const Tensor& x) { return x.exp(); };
  auto ref = [](double x) { return std::exp(x); };
  CaseList c = float_op_cases(op, ref, -5, 5);
  // Around the edges of the SIMD polynomial's range, a packet and more at a time: subnormal,
  // zero, largest finite and infinite results beside ordinary ones.
  c.push_back(unary_case("range edges", values_ref({2, 16}, f32, {-110, -104, -100, -95, -90, -87.5, -87.1, -87, -86.9, -50, -1, 0,
                                                                 1, 50, 86.9, 87, 87.1, 87.5, 88, 88.5, 88.7, 88.8, 90, 100,
                                                                 -3, 3, -87.2, 87.2, -88.7, 88.72, -0.5, 0.5}),
                         op, f32, ref));
  return c;
}
LT_OP_TEST(log) { return float_op_cases([](const Tensor& x) { return x.log(); }, [](double x) { return std::log(x); }, 0.01, 9); }
LT_OP_TEST(log2) {
  return float_op_cases([](const Tensor& x) { return lt::log2(x); }, [](double x) { return std::log2(x); }, 0.01, 9);
}

LT_OP_TEST(check_finite) {
  // Finite values pass unchanged; a NaN or an infinity is a fault (tests/nn/clip_grad_test.cpp).
  auto same = [](double x) { return x; };
  auto call = [](const Tensor& x) { return lt::check_finite(x); };
  const double big = f32_stands_for() == DType::f16 ? 6e4 : 1e30;  // finite in the run's dtype
  return {unary_case("f32 [3, 5]", random_ref({3, 5}, f32, 51, -big, big), call, f32, same),
          unary_case("f32 rank 0", random_ref({}, f32, 52), call, f32, same),
          unary_case("f32 [170, 201], several parallel blocks", random_ref({170, 201}, f32, 53), call, f32, same),
          unary_case("size 0", random_ref({0, 3}), call, f32, same),
          tight(unary_case("f64 [2, 3]", random_ref({2, 3}, f64, 54, -1e300, 1e300), call, f64, same))};
}

LT_OP_TEST(log1p) {
  CaseList c = float_op_cases([](const Tensor& x) { return lt::log1p(x); }, [](double x) { return std::log1p(x); }, -0.99, 9);
  // Close to 0 log1p keeps precision that log(1 + x) loses.
  c.push_back(unary_case("tiny", values_ref({3}, f32, {1e-7, -3e-8, 2e-10}), [](const Tensor& x) { return lt::log1p(x); },
                         f32, [](double x) { return std::log1p(x); }));
  return c;
}
LT_OP_TEST(expm1) {
  CaseList c = float_op_cases([](const Tensor& x) { return lt::expm1(x); }, [](double x) { return std::expm1(x); }, -5, 5);
  c.push_back(unary_case("tiny", values_ref({3}, f32, {1e-7, -3e-8, 2e-10}), [](const Tensor& x) { return lt::expm1(x); },
                         f32, [](double x) { return std::expm1(x); }));
  return c;
}
LT_OP_TEST(sqrt) { return float_op_cases([](const Tensor& x) { return x.sqrt(); }, [](double x) { return std::sqrt(x); }, 0, 9); }
LT_OP_TEST(rsqrt) {
  return float_op_cases([](const Tensor& x) { return x.rsqrt(); }, [](double x) { return 1 / std::sqrt(x); }, 0.01, 9);
}
LT_OP_TEST(sin) { return float_op_cases([](const Tensor& x) { return x.sin(); }, [](double x) { return std::sin(x); }, -7, 7); }
LT_OP_TEST(cos) { return float_op_cases([](const Tensor& x) { return x.cos(); }, [](double x) { return std::cos(x); }, -7, 7); }
LT_OP_TEST(tanh) { return float_op_cases([](const Tensor& x) { return x.tanh(); }, [](double x) { return std::tanh(x); }, -4, 4); }
LT_OP_TEST(erf) { return float_op_cases([](const Tensor& x) { return lt::erf(x); }, [](double x) { return std::erf(x); }, -3, 3); }
LT_OP_TEST(sigmoid) { return float_op_cases([](const Tensor& x) { return x.sigmoid(); }, sigmoid_ref, -9, 9); }
LT_OP_TEST(silu) {
  // x * sigmoid(x); at -inf that is -inf * 0, NaN, as in PyTorch.
  return float_op_cases([](const Tensor& x) { return lt::silu(x); }, [](double x) { return x / (1 + std::exp(-x)); }, -9, 9);
}

LT_OP_TEST(gelu) {
  CaseList c = float_op_cases([](const Tensor& x) { return lt::gelu(x); }, gelu_erf_ref, -4, 4);
  for (OpCase& t : float_op_cases([](const Tensor& x) { return lt::gelu(x, "tanh"); }, gelu_tanh_ref, -4, 4)) {
    t.label = "tanh form: " + t.label;
    c.push_back(std::move(t));
  }
  // The two forms differ by up to about 1e-3: the tanh form must not be the exact one.
  Ref x = values_ref({3}, f32, {-1.5, 0.7, 2.2});
  c.push_back(unary_case("tanh form differs from erf form", x, [](const Tensor& t) { return lt::gelu(t, "tanh"); }, f32, gelu_tanh_ref));
  c.back().rtol = 1e-6;
  c.back().atol = 1e-7;
  return c;
}

LT_OP_TEST(softplus) {
  auto softplus_ref = [](double beta, double threshold) {
    return [=](double x) { return x * beta > threshold ? x : std::log1p(std::exp(x * beta)) / beta; };
  };
  CaseList c = float_op_cases([](const Tensor& x) { return lt::softplus(x); }, softplus_ref(1, 20), -30, 30);
  Ref x = random_ref({4, 5}, f32, 21, -3, 3);
  c.push_back(unary_case("beta 2 threshold 1: linear above x = 0.5", x, [](const Tensor& t) { return lt::softplus(t, 2.0, 1.0); },
                         f32, softplus_ref(2, 1)));
  c.push_back(unary_case("beta 0.5 threshold 3", x, [](const Tensor& t) { return lt::softplus(t, 0.5, 3.0); }, f32,
                         softplus_ref(0.5, 3)));
  c.push_back(unary_case("beta 2 on specials", special_ref(), [](const Tensor& t) { return lt::softplus(t, 2.0, 1.0); }, f32,
                         softplus_ref(2, 1)));
  return c;
}

LT_OP_TEST(relu) {
  // NaN passes through, as PyTorch's relu.
  return same_dtype_cases([](const Tensor& x) { return x.relu(); }, [](double x) { return std::isnan(x) ? x : std::max(x, 0.0); });
}

LT_OP_TEST(sign) {
  CaseList c = same_dtype_cases([](const Tensor& x) { return x.sign(); }, sign_ref);
  c.push_back(unary_case("bool stays bool", random_ref({6}, boolean, 22), [](const Tensor& x) { return x.sign(); }, boolean, sign_ref));
  return c;
}

LT_OP_TEST(floor) {
  CaseList c = same_dtype_cases([](const Tensor& x) { return x.floor(); }, [](double x) { return std::floor(x); });
  c.push_back(unary_case("halves", values_ref({6}, f32, {-2.5, -1.5, -0.5, 0.5, 1.5, 2.5}), [](const Tensor& x) { return x.floor(); },
                         f32, [](double x) { return std::floor(x); }));
  return c;
}

LT_OP_TEST(ceil) {
  CaseList c = same_dtype_cases([](const Tensor& x) { return x.ceil(); }, [](double x) { return std::ceil(x); });
  c.push_back(unary_case("halves", values_ref({6}, f32, {-2.5, -1.5, -0.5, 0.5, 1.5, 2.5}), [](const Tensor& x) { return x.ceil(); },
                         f32, [](double x) { return std::ceil(x); }));
  return c;
}

LT_OP_TEST(round) {
  CaseList c = same_dtype_cases([](const Tensor& x) { return x.round(); }, round_half_even_ref);
  Ref halves = values_ref({10}, f32, {-3.5, -2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.5, 2.4999998, 1e7 + 1});
  c.push_back(unary_case("halves go to even", halves, [](const Tensor& x) { return x.round(); }, f32, round_half_even_ref));
  c.push_back(tight(unary_case("f64 halves go to even", values_ref({4}, f64, {-0.5, 0.5, 4.5, 5.5}), [](const Tensor& x) { return x.round(); },
                               f64, round_half_even_ref)));
  return c;
}

LT_OP_TEST(reciprocal) {
  // 1 / 0 is inf, 1 / -0 is -inf; integers compute in f32.
  CaseList c = float_op_cases([](const Tensor& x) { return x.reciprocal(); }, [](double x) { return 1 / x; }, -4, 4);
  c.push_back(unary_case("integer zero", values_ref({3}, i32, {0, 2, -4}), [](const Tensor& x) { return x.reciprocal(); }, f32,
                         [](double x) { return 1 / x; }));
  return c;
}

namespace {
/// Predicates give bool for inputs of every dtype.
CaseList predicate_cases(const Call1& op, const Fn1& ref) {
  return {unary_case("f32 specials", special_ref(), op, boolean, ref),
          unary_case("f64 specials", special_ref(f64), op, boolean, ref),
          unary_case("f32 [3, 4]", random_ref({3, 4}, f32, 31), op, boolean, ref),
          unary_case("f32 rank 0", values_ref({}, f32, {nan_value}), op, boolean, ref),
          unary_case("size 0", random_ref({0, 3}), op, boolean, ref),
          unary_case("i32", random_ref({2, 5}, i32, 32, -2, 2), op, boolean, ref),
          unary_case("i64", random_ref({4}, i64, 33, -2, 2), op, boolean, ref),
          unary_case("bool", random_ref({2, 3}, boolean, 34), op, boolean, ref)};
}
}  // namespace

LT_OP_TEST(logical_not) {
  // NaN is non-zero, so logical_not(NaN) is false.
  CaseList c = predicate_cases([](const Tensor& x) { return !x; }, [](double x) { return x == 0; });
  c.push_back(unary_case("method form", random_ref({5}, boolean, 35), [](const Tensor& x) { return x.logical_not(); }, boolean,
                         [](double x) { return x == 0; }));
  return c;
}
LT_OP_TEST(isnan) { return predicate_cases([](const Tensor& x) { return x.isnan(); }, [](double x) { return std::isnan(x); }); }
LT_OP_TEST(isinf) { return predicate_cases([](const Tensor& x) { return x.isinf(); }, [](double x) { return std::isinf(x); }); }

LT_OP_TEST(clamp) {
  // NaN passes through; with min > max every element becomes max (min is applied first).
  auto clamp_ref = [](std::optional<double> lo, std::optional<double> hi) {
    return [=](double x) {
      if (std::isnan(x)) return x;
      if (lo && x < *lo) x = *lo;
      if (hi && x > *hi) x = *hi;
      return x;
    };
  };
  Ref x = random_ref({3, 5}, f32, 41, -3, 3);
  Ref xi = random_ref({2, 6}, i32, 42, -9, 9);
  return {
      unary_case("min only", x, [](const Tensor& t) { return t.clamp(-0.5); }, f32, clamp_ref(-0.5, {})),
      unary_case("max only", x, [](const Tensor& t) { return t.clamp(std::nullopt, 0.75); }, f32, clamp_ref({}, 0.75)),
      unary_case("both", x, [](const Tensor& t) { return lt::clamp(t, -1.0, 1.5); }, f32, clamp_ref(-1.0, 1.5)),
      unary_case("min above max gives max", x, [](const Tensor& t) { return lt::clamp(t, 1.0, -1.0); }, f32, clamp_ref(1.0, -1.0)),
      unary_case("clamp_min", x, [](const Tensor& t) { return lt::clamp_min(t, 0.25); }, f32, clamp_ref(0.25, {})),
      unary_case("clamp_max", x, [](const Tensor& t) { return lt::clamp_max(t, 0.25); }, f32, clamp_ref({}, 0.25)),
      unary_case("NaN and infinities", special_ref(), [](const Tensor& t) { return lt::clamp(t, -2.0, 2.0); }, f32,
                 clamp_ref(-2.0, 2.0)),
      unary_case("rank 0", random_ref({}, f32, 43, -3, 3), [](const Tensor& t) { return lt::clamp(t, -1.0, 1.0); }, f32,
                 clamp_ref(-1.0, 1.0)),
      unary_case("size 0", random_ref({0, 3}), [](const Tensor& t) { return lt::clamp(t, -1.0, 1.0); }, f32, clamp_ref(-1.0, 1.0)),
      tight(unary_case("f64", random_ref({4}, f64, 44, -3, 3), [](const Tensor& t) { return lt::clamp(t, -1.0, 1.0); }, f64,
                       clamp_ref(-1.0, 1.0))),
      unary_case("i32 with integer bounds stays i32", xi, [](const Tensor& t) { return lt::clamp(t, -4, 5); }, i32,
                 clamp_ref(-4.0, 5.0)),
      unary_case("i32 with a float bound becomes f32", xi, [](const Tensor& t) { return lt::clamp(t, -2.5); }, f32, clamp_ref(-2.5, {})),
      unary_case("i32 with float max becomes f32", xi, [](const Tensor& t) { return lt::clamp(t, -4, 3.5); }, f32,
                 clamp_ref(-4.0, 3.5)),
  };
}

}  // namespace lt::test
