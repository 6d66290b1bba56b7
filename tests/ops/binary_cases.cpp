// Reference cases of the binary and ternary elementwise ops: broadcasting, NaN and ±inf, every
// operand dtype the op allows with PyTorch's result dtypes, and C++ scalar operands. Expected
// values are plain std:: math in f64 on the inputs as stored, rounded to the result dtype.
#include <cmath>
#include <functional>
#include <limits>
#include <string>

#include "op_harness.hpp"

namespace lt::test {
namespace {

using Fn2 = std::function<double(double, double)>;

/// How an op's result dtype follows from its operands' promoted dtype.
enum class Result { promoted, floating, boolean_result };

DType result_dtype(Result r, DType promoted) {
  switch (r) {
    case Result::promoted: return promoted;
    case Result::floating: return is_floating(promoted) ? promoted : f32;
    case Result::boolean_result: return boolean;
  }
  return promoted;
}

struct BinarySpec {
  Fn2 ref;                    // on floating values
  Result result = Result::promoted;
  Fn2 int_ref = nullptr;      // on integer and bool values, where it differs from ref
  bool bool_operands = true;  // bool tensors are allowed as operands
  double lo = -2, hi = 2;     // floating operands
  double int_lo = -9, int_hi = 9;
  double int_b_lo = -9, int_b_hi = 9;  // integer second operands (divisors, exponents)
};

Ref ref2(const Fn2& f, DType out, const Ref& a, const Ref& b) {
  return ref_map(out, [f](const std::vector<double>& v) { return f(v[0], v[1]); }, {a, b});
}

/// A rank-2 view of special_ref's values: [10, 1] against [1, 10] pairs every two of them.
Ref specials_as(std::vector<std::int64_t> shape, DType t = f32) {
  Ref r = special_ref(t);
  r.shape = std::move(shape);
  return r;
}

OpCase tight(OpCase c) {
  c.rtol = 1e-12;
  c.atol = 1e-14;
  return c;
}

template <class Op>
CaseList binary_cases(Op op, const BinarySpec& s) {
  auto call = [op](const std::vector<Tensor>& in) { return op(in[0], in[1]); };
  const Fn2 iref = s.int_ref ? s.int_ref : s.ref;
  auto float_case = [&](std::string label, const Ref& a, const Ref& b) {
    DType t = promote_types(a.dtype, b.dtype);
    return OpCase{std::move(label), {a, b}, call, ref2(s.ref, result_dtype(s.result, t), a, b)};
  };
  auto int_case = [&](std::string label, const Ref& a, const Ref& b, DType promoted) {
    return OpCase{std::move(label), {a, b}, call, ref2(iref, result_dtype(s.result, promoted), a, b)};
  };
  Ref x34 = random_ref({3, 4}, f32, 103, s.lo, s.hi);
  Ref xi = random_ref({3, 4}, i32, 104, s.int_lo, s.int_hi);
  Ref xb = random_ref({3, 4}, i32, 105, s.int_b_lo, s.int_b_hi);
  CaseList c = {
      float_case("f32 [3, 1] with [1, 4]", random_ref({3, 1}, f32, 101, s.lo, s.hi), random_ref({1, 4}, f32, 102, s.lo, s.hi)),
      float_case("f32 [2, 3, 4] with [4]", random_ref({2, 3, 4}, f32, 106, s.lo, s.hi), random_ref({4}, f32, 107, s.lo, s.hi)),
      float_case("f32 rank 0 with [2, 3]", random_ref({}, f32, 108, s.lo, s.hi), random_ref({2, 3}, f32, 109, s.lo, s.hi)),
      float_case("f32 [2, 3] with rank 0", random_ref({2, 3}, f32, 110, s.lo, s.hi), random_ref({}, f32, 111, s.lo, s.hi)),
      float_case("rank 0 with rank 0", random_ref({}, f32, 112, s.lo, s.hi), random_ref({}, f32, 113, s.lo, s.hi)),
      float_case("size 0 [0, 3] with [3]", random_ref({0, 3}), random_ref({3}, f32, 114, s.lo, s.hi)),
      float_case("every pair of NaN, ±inf, ±0 and numbers", specials_as({10, 1}), specials_as({1, 10})),
      tight(float_case("f64 specials", specials_as({10, 1}, f64), specials_as({1, 10}, f64))),
      tight(float_case("f64 [2, 3] with [3]", random_ref({2, 3}, f64, 115, s.lo, s.hi), random_ref({3}, f64, 116, s.lo, s.hi))),
      float_case("f32 with f64 gives f64", x34, random_ref({4}, f64, 117, s.lo, s.hi)),
      int_case("i32 with i32", xi, xb, i32),
      int_case("i32 with i64 gives i64", xi, random_ref({4}, i64, 118, s.int_b_lo, s.int_b_hi), i64),
      float_case("i32 with f32 gives f32", xi, random_ref({1, 4}, f32, 119, s.lo, s.hi)),
      int_case("i64 rank 0 with i32 [3, 4] stays i32", random_ref({}, i64, 120, s.int_lo, s.int_hi), xb, i32),
      // More elements than one parallel block: blocks start inside rows of the broadcast operand.
      float_case("f32 [160, 257] with i32 [257], several blocks", random_ref({160, 257}, f32, 125, s.lo, s.hi),
                 random_ref({257}, i32, 126, s.int_b_lo, s.int_b_hi)),
      // Tensor and C++ scalar: the scalar is the weakest operand.
      OpCase{"f32 tensor with 2.5", {x34}, [op](auto& in) { return op(in[0], 2.5); },
             ref_map(result_dtype(s.result, f32), [f = s.ref](auto& v) { return f(v[0], 2.5); }, {x34})},
      OpCase{"-1.5 with f32 tensor", {x34}, [op](auto& in) { return op(-1.5, in[0]); },
             ref_map(result_dtype(s.result, f32), [f = s.ref](auto& v) { return f(-1.5, v[0]); }, {x34})},
      OpCase{"i32 tensor with 3 stays i32", {xi}, [op](auto& in) { return op(in[0], 3); },
             ref_map(result_dtype(s.result, i32), [iref](auto& v) { return iref(v[0], 3); }, {xi})},
      OpCase{"3 with i32 tensor stays i32", {xb}, [op](auto& in) { return op(3, in[0]); },
             ref_map(result_dtype(s.result, i32), [iref](auto& v) { return iref(3, v[0]); }, {xb})},
      OpCase{"i32 tensor with 2.5 gives f32", {xi}, [op](auto& in) { return op(in[0], 2.5); },
             ref_map(result_dtype(s.result, f32), [f = s.ref](auto& v) { return f(v[0], 2.5); }, {xi})},
      OpCase{"f64 tensor with 3 stays f64", {random_ref({5}, f64, 121, s.lo, s.hi)}, [op](auto& in) { return op(in[0], 3); },
             ref_map(result_dtype(s.result, f64), [f = s.ref](auto& v) { return f(v[0], 3); }, {random_ref({5}, f64, 121, s.lo, s.hi)})},
  };
  if (s.bool_operands) {
    Ref ba = random_ref({2, 3}, boolean, 122), bb = random_ref({3}, boolean, 123);
    c.push_back(int_case("bool with bool", ba, bb, boolean));
    c.push_back(OpCase{"bool tensor with 1 gives i64", {ba}, [op](auto& in) { return op(in[0], 1); },
                       ref_map(result_dtype(s.result, i64), [iref](auto& v) { return iref(v[0], 1); }, {ba})});
    c.push_back(int_case("bool with i32 gives i32", ba, random_ref({3}, i32, 124, s.int_b_lo, s.int_b_hi), i32));
  }
  return c;
}

double nan_max(double a, double b) { return std::isnan(a) || std::isnan(b) ? std::numeric_limits<double>::quiet_NaN() : std::max(a, b); }
double nan_min(double a, double b) { return std::isnan(a) || std::isnan(b) ? std::numeric_limits<double>::quiet_NaN() : std::min(a, b); }

/// Integer powers as PyTorch's: negative exponents give 0 except for bases 1 and -1.
double int_pow(double a, double b) {
  if (b >= 0) return std::pow(a, b);
  if (a == 1) return 1;
  if (a == -1) return std::fmod(-b, 2.0) == 0 ? 1 : -1;
  return 0;
}

}  // namespace

LT_OP_TEST(add) {
  return binary_cases([](const auto& a, const auto& b) { return a + b; }, {[](double a, double b) { return a + b; }});
}
LT_OP_TEST(sub) {
  // Bool operands are rejected, as in PyTorch (see error_test.cpp).
  BinarySpec s{[](double a, double b) { return a - b; }};
  s.bool_operands = false;
  return binary_cases([](const auto& a, const auto& b) { return a - b; }, s);
}
LT_OP_TEST(mul) {
  return binary_cases([](const auto& a, const auto& b) { return a * b; }, {[](double a, double b) { return a * b; }});
}
LT_OP_TEST(div) {
  // True division: integers divide as f32, x / 0 is ±inf or NaN.
  BinarySpec s{[](double a, double b) { return a / b; }, Result::floating};
  return binary_cases([](const auto& a, const auto& b) { return a / b; }, s);
}
LT_OP_TEST(pow) {
  BinarySpec s{[](double a, double b) { return std::pow(a, b); }, Result::promoted, int_pow};
  s.lo = 0.1;
  s.hi = 3;
  s.int_lo = -4;
  s.int_hi = 4;
  s.int_b_lo = -3;
  s.int_b_hi = 5;
  s.bool_operands = false;
  CaseList c = binary_cases([](const auto& a, const auto& b) { return lt::pow(a, b); }, s);
  Ref neg_base = random_ref({2, 3}, f32, 131, -3, -0.1), exponent = values_ref({3}, f32, {2, 3, 0.5});
  c.push_back({"negative base: integral exponents are real, others NaN", {neg_base, exponent},
               [](auto& in) { return in[0].pow(in[1]); }, ref2([](double a, double b) { return std::pow(a, b); }, f32, neg_base, exponent)});
  Ref bases = values_ref({6}, i64, {0, 1, -1, 2, -2, 7}), exps = values_ref({6}, i64, {-1, -3, -3, -1, -2, 0});
  c.push_back({"integer negative exponents", {bases, exps}, [](auto& in) { return in[0].pow(in[1]); },
               ref2(int_pow, i64, bases, exps)});
  return c;
}
LT_OP_TEST(maximum) {
  // NaN in either operand gives NaN, as torch.maximum.
  return binary_cases([](const auto& a, const auto& b) { return lt::maximum(a, b); }, {nan_max});
}
LT_OP_TEST(minimum) { return binary_cases([](const auto& a, const auto& b) { return lt::minimum(a, b); }, {nan_min}); }
LT_OP_TEST(fmod) {
  // C's fmod: the result has the sign of the dividend. Integer division by zero is an error
  // (error_test.cpp), so integer divisors here are non-zero.
  BinarySpec s{[](double a, double b) { return std::fmod(a, b); }};
  s.bool_operands = false;
  s.int_b_lo = 1;
  CaseList c = binary_cases([](const auto& a, const auto& b) { return lt::fmod(a, b); }, s);
  Ref a = values_ref({8}, i32, {7, -7, 7, -7, 0, 9, -9, 5}), b = values_ref({8}, i32, {3, 3, -3, -3, 5, -4, 4, 7});
  c.push_back({"integer signs follow the dividend", {a, b}, [](auto& in) { return lt::fmod(in[0], in[1]); },
               ref2([](double x, double y) { return std::fmod(x, y); }, i32, a, b)});
  Ref fa = values_ref({4}, f32, {5.5, -5.5, 5.5, -5.5}), fb = values_ref({4}, f32, {2, 2, -2, -2});
  c.push_back({"float signs follow the dividend", {fa, fb}, [](auto& in) { return lt::fmod(in[0], in[1]); },
               ref2([](double x, double y) { return std::fmod(x, y); }, f32, fa, fb)});
  return c;
}
LT_OP_TEST(hypot) {
  BinarySpec s{[](double a, double b) { return std::hypot(a, b); }, Result::floating};
  return binary_cases([](const auto& a, const auto& b) { return lt::hypot(a, b); }, s);
}

LT_OP_TEST(atan2) {
  BinarySpec s{[](double a, double b) { return std::atan2(a, b); }, Result::floating};
  return binary_cases([](const auto& a, const auto& b) { return lt::atan2(a, b); }, s);
}

namespace {
/// Comparisons and logical ops: bool results for operands of every dtype. Operands are drawn
/// from few values so that equal pairs occur.
BinarySpec predicate(Fn2 f) {
  BinarySpec s{std::move(f), Result::boolean_result};
  s.int_lo = s.int_b_lo = -2;
  s.int_hi = s.int_b_hi = 2;
  return s;
}
}  // namespace

LT_OP_TEST(eq) { return binary_cases([](const auto& a, const auto& b) { return a == b; }, predicate([](double a, double b) { return a == b; })); }
LT_OP_TEST(ne) { return binary_cases([](const auto& a, const auto& b) { return a != b; }, predicate([](double a, double b) { return a != b; })); }
LT_OP_TEST(lt) { return binary_cases([](const auto& a, const auto& b) { return a < b; }, predicate([](double a, double b) { return a < b; })); }
LT_OP_TEST(le) { return binary_cases([](const auto& a, const auto& b) { return a <= b; }, predicate([](double a, double b) { return a <= b; })); }
LT_OP_TEST(gt) { return binary_cases([](const auto& a, const auto& b) { return a > b; }, predicate([](double a, double b) { return a > b; })); }
LT_OP_TEST(ge) { return binary_cases([](const auto& a, const auto& b) { return a >= b; }, predicate([](double a, double b) { return a >= b; })); }
LT_OP_TEST(logical_and) {
  // Non-zero is true, NaN included.
  return binary_cases([](const auto& a, const auto& b) { return lt::logical_and(a, b); },
                      predicate([](double a, double b) { return a != 0 && b != 0; }));
}
LT_OP_TEST(logical_or) {
  return binary_cases([](const auto& a, const auto& b) { return lt::logical_or(a, b); },
                      predicate([](double a, double b) { return a != 0 || b != 0; }));
}

LT_OP_TEST(where) {
  auto select = [](DType out, const Ref& c, const Ref& a, const Ref& b) {
    return ref_map(out, [](const std::vector<double>& v) { return v[0] != 0 ? v[1] : v[2]; }, {c, a, b});
  };
  auto call = [](const std::vector<Tensor>& in) { return lt::where(in[0], in[1], in[2]); };
  Ref c31 = random_ref({3, 1}, boolean, 141), c34 = random_ref({3, 4}, boolean, 142);
  Ref a14 = random_ref({1, 4}, f32, 143), b34 = random_ref({3, 4}, f32, 144);
  Ref i34 = random_ref({3, 4}, i32, 145, -50, 50), l4 = random_ref({4}, i64, 146, -50, 50);
  Ref c10 = random_ref({10}, boolean, 147);
  Ref scalar_c = values_ref({}, boolean, {1});
  Ref big_c = random_ref({150, 1}, boolean, 157), big_a = random_ref({150, 300}, f32, 158), big_b = random_ref({300}, f64, 159);
  Ref c234 = random_ref({2, 3, 4}, boolean, 148), v4 = random_ref({4}, f32, 149), v234 = random_ref({2, 3, 4}, f32, 150);
  return {
      {"broadcast [3, 1], [1, 4], [3, 4]", {c31, a14, b34}, call, select(f32, c31, a14, b34)},
      {"[2, 3, 4] condition with [4] values", {c234, v4, v234}, call, select(f32, c234, v4, v234)},
      {"rank 0 condition", {scalar_c, b34, a14}, call, select(f32, scalar_c, b34, a14)},
      {"several parallel blocks", {big_c, big_a, big_b}, call, select(f64, big_c, big_a, big_b)},
      {"rank 0 alone", {scalar_c, random_ref({}, f32, 151), random_ref({}, f32, 152)}, call,
       select(f32, scalar_c, random_ref({}, f32, 151), random_ref({}, f32, 152))},
      {"size 0", {random_ref({0, 3}, boolean), random_ref({0, 3}), random_ref({3})}, call,
       select(f32, random_ref({0, 3}, boolean), random_ref({0, 3}), random_ref({3}))},
      {"NaN and infinities pass through", {c10, special_ref(), special_ref(f32)}, call, select(f32, c10, special_ref(), special_ref())},
      tight({"f64", {c34, random_ref({3, 4}, f64, 153), random_ref({4}, f64, 154)}, call,
             select(f64, c34, random_ref({3, 4}, f64, 153), random_ref({4}, f64, 154))}),
      {"i32 with i64 gives i64", {c34, i34, l4}, call, select(i64, c34, i34, l4)},
      {"i32 with f32 gives f32", {c34, i34, b34}, call, select(f32, c34, i34, b34)},
      {"bool values stay bool", {c34, random_ref({3, 4}, boolean, 155), random_ref({4}, boolean, 156)}, call,
       select(boolean, c34, random_ref({3, 4}, boolean, 155), random_ref({4}, boolean, 156))},
      {"f32 with scalar 0.0 stays f32", {c34, b34}, [](auto& in) { return lt::where(in[0], in[1], 0.0); },
       ref_map(f32, [](auto& v) { return v[0] != 0 ? v[1] : 0.0; }, {c34, b34})},
      {"scalar -2.5 with f32", {c34, b34}, [](auto& in) { return lt::where(in[0], -2.5, in[1]); },
       ref_map(f32, [](auto& v) { return v[0] != 0 ? -2.5 : v[1]; }, {c34, b34})},
      {"i32 with scalar 2.5 gives f32", {c34, i34}, [](auto& in) { return lt::where(in[0], in[1], 2.5); },
       ref_map(f32, [](auto& v) { return v[0] != 0 ? v[1] : 2.5; }, {c34, i34})},
      {"i32 with scalar 7 stays i32", {c34, i34}, [](auto& in) { return lt::where(in[0], 7, in[1]); },
       ref_map(i32, [](auto& v) { return v[0] != 0 ? 7.0 : v[1]; }, {c34, i34})},
      {"condition from a comparison", {b34, a14}, [](auto& in) { return lt::where(in[0] > in[1], in[0], in[1]); },
       ref_map(f32, [](auto& v) { return v[0] > v[1] ? v[0] : v[1]; }, {b34, a14})},
  };
}

}  // namespace lt::test
