#pragma once
// The op reference table: each registered op has an entry whose cases give inputs, a call of
// the library, and the expected result computed independently by a plain f64 loop. The driver
// runs every case on the eager and the lazy device, and again with strided inputs.
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <vector>

#include <lazytensor/lazytensor.hpp>

namespace lt::test {

/// A reference value: shape, dtype and the elements as doubles, row-major.
struct Ref {
  std::vector<std::int64_t> shape;
  DType dtype = DType::f32;
  std::vector<double> v;

  std::int64_t numel() const {
    std::int64_t n = 1;
    for (auto e : shape) n *= e;
    return n;
  }
};

/// The dtype that cases written for f32 run in: bf16 or f16 while the driver runs the table in
/// that low-precision dtype. Then f32 values of the references round to it (inputs, and
/// results, once per op) and the driver stores f32 inputs in it and expects it where the case
/// expects f32.
inline DType& f32_stands_for() {
  static DType t = DType::f32;
  return t;
}

/// x rounded to nearest even in a binary format of `bits` significant bits whose normals
/// reach down to 2^(min_e - 1) (below, a fixed quantum: subnormals) and whose values from
/// 2^overflow_e up are infinite: computed here from the definition, not by the library's
/// conversions.
inline double round_binary(double x, int bits, int min_e, int overflow_e) {
  if (!std::isfinite(x) || x == 0) return x;
  int e;
  std::frexp(x, &e);  // |x| in [2^(e-1), 2^e)
  const double quantum = std::ldexp(1.0, std::max(e, min_e) - bits);
  const double r = std::nearbyint(x / quantum) * quantum;  // the default mode: ties to even
  return std::abs(r) >= std::ldexp(1.0, overflow_e) ? std::copysign(std::numeric_limits<double>::infinity(), x) : r;
}
/// bf16: 8 significant bits, f32's exponent range.
inline double round_bf16(double x) { return round_binary(x, 8, -125, 128); }
/// f16: 11 significant bits, normals down to 2^-14, subnormals to 2^-24, the largest finite 65504.
inline double round_f16(double x) { return round_binary(x, 11, -13, 16); }

/// Rounds x as storing it in dtype t would.
inline double round_to(DType t, double x) {
  switch (t) {
    case DType::f32:
      if (f32_stands_for() == DType::bf16) return round_bf16(x);
      if (f32_stands_for() == DType::f16) return round_f16(x);
      return static_cast<double>(static_cast<float>(x));
    case DType::bf16: return round_bf16(x);
    case DType::f16: return round_f16(x);
    case DType::i32: return static_cast<double>(static_cast<std::int32_t>(x));
    case DType::i64: return static_cast<double>(static_cast<std::int64_t>(x));
    case DType::boolean: return x != 0 ? 1.0 : 0.0;
    default: return x;
  }
}

/// Rounds x as an op computing in dtype t rounds a value it goes on computing with: in the
/// low-precision runs, f32 is still f32 (an op rounds to bf16 or f16 once, its result).
inline double round_intermediate(DType t, double x) {
  return t == DType::f32 ? static_cast<double>(static_cast<float>(x)) : round_to(t, x);
}

/// Values of `shape`: floats uniform in [lo, hi), integers in [lo, hi], bools half true.
inline Ref random_ref(std::vector<std::int64_t> shape, DType t = DType::f32, std::uint32_t seed = 1, double lo = -2,
                      double hi = 2) {
  Ref r{std::move(shape), t, {}};
  std::mt19937 gen(seed);
  for (std::int64_t k = 0; k < r.numel(); ++k) {
    double x;
    if (is_floating(t)) x = std::uniform_real_distribution<double>(lo, hi)(gen);
    else if (t == DType::boolean) x = static_cast<double>(gen() & 1);
    else x = static_cast<double>(std::uniform_int_distribution<std::int64_t>(static_cast<std::int64_t>(lo), static_cast<std::int64_t>(hi))(gen));
    r.v.push_back(round_to(t, x));
  }
  return r;
}

/// A rank-1 float value holding NaN, ±inf, ±0 and ordinary numbers.
inline Ref special_ref(DType t = DType::f32) {
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  std::vector<double> v = {nan, inf, -inf, 0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 3.0};
  return Ref{{static_cast<std::int64_t>(v.size())}, t, v};
}

inline Ref values_ref(std::vector<std::int64_t> shape, DType t, std::vector<double> v) {
  for (double& x : v) x = round_to(t, x);
  return Ref{std::move(shape), t, std::move(v)};
}

/// Index of each element of `out` in a broadcast operand of shape `in` (NumPy rules).
inline std::vector<std::int64_t> broadcast_index(const std::vector<std::int64_t>& in, const std::vector<std::int64_t>& out) {
  std::vector<std::int64_t> idx;
  std::int64_t n = 1;
  for (auto e : out) n *= e;
  std::vector<std::int64_t> pos(out.size(), 0);
  std::size_t off = out.size() - in.size();
  for (std::int64_t k = 0; k < n; ++k) {
    std::int64_t flat = 0;
    for (std::size_t d = 0; d < in.size(); ++d) flat = flat * in[d] + (in[d] == 1 ? 0 : pos[d + off]);
    idx.push_back(flat);
    for (int d = static_cast<int>(out.size()) - 1; d >= 0; --d)
      if (++pos[static_cast<std::size_t>(d)] < out[static_cast<std::size_t>(d)]) break;
      else pos[static_cast<std::size_t>(d)] = 0;
  }
  return idx;
}

inline std::vector<std::int64_t> broadcast_shape(std::vector<std::vector<std::int64_t>> shapes) {
  std::size_t r = 0;
  for (auto& s : shapes) r = std::max(r, s.size());
  std::vector<std::int64_t> out(r, 1);
  for (auto& s : shapes)
    for (std::size_t d = 0; d < s.size(); ++d) {
      auto& o = out[d + r - s.size()];
      if (s[d] != 1) o = s[d];
    }
  return out;
}

/// Elementwise reference over broadcast operands; results are rounded to `out`.
inline Ref ref_map(DType out, const std::function<double(const std::vector<double>&)>& f, const std::vector<Ref>& in) {
  std::vector<std::vector<std::int64_t>> shapes;
  for (auto& r : in) shapes.push_back(r.shape);
  Ref res{broadcast_shape(shapes), out, {}};
  std::vector<std::vector<std::int64_t>> idx;
  for (auto& r : in) idx.push_back(broadcast_index(r.shape, res.shape));
  std::vector<double> args(in.size());
  for (std::int64_t k = 0; k < res.numel(); ++k) {
    for (std::size_t j = 0; j < in.size(); ++j) args[j] = in[j].v[static_cast<std::size_t>(idx[j][static_cast<std::size_t>(k)])];
    res.v.push_back(round_to(out, f(args)));
  }
  return res;
}

/// The library tensor holding a Ref's values (eager device).
inline Tensor to_tensor(const Ref& r) {
  Shape s(std::span<const std::int64_t>(r.shape));
  return visit(r.dtype, [&]<class T>(Tag<T>) {
    std::vector<T> v;
    for (double x : r.v) v.push_back(static_cast<T>(x));
    if constexpr (std::is_same_v<T, bool>) {
      // std::vector<bool> has no data(): go through a byte buffer.
      std::vector<std::uint8_t> bytes(v.begin(), v.end());
      Array a = Array::empty(DType::boolean, s);
      std::copy(bytes.begin(), bytes.end(), reinterpret_cast<std::uint8_t*>(a.view.data));
      return tensor_from_array(a, cpu);
    } else {
      return from_vector(v, s);
    }
  });
}

struct OpCase {
  std::string label;
  std::vector<Ref> inputs;
  std::function<Tensor(const std::vector<Tensor>&)> run;
  Ref expected;
  double rtol = 1e-5;
  double atol = 1e-6;
  bool strided_variant = true;  // also run with every input made a strided view
  bool low_precision_variant = true;  // also run in bf16 and f16 (f32 inputs and results in them)
};

using CaseList = std::vector<OpCase>;

inline std::map<OpId, std::function<CaseList()>>& op_table() {
  static std::map<OpId, std::function<CaseList()>> table;
  return table;
}

inline bool register_op_test(OpId id, std::function<CaseList()> cases) {
  op_table()[id] = std::move(cases);
  return true;
}

}  // namespace lt::test

#define LT_TEST_CONCAT_(a, b) a##b
#define LT_TEST_CONCAT(a, b) LT_TEST_CONCAT_(a, b)
/// Registers the reference cases of one op: LT_OP_TEST(add) { return {case, ...}; }
#define LT_OP_TEST(op)                                                                          \
  static ::lt::test::CaseList LT_TEST_CONCAT(lt_op_cases_, op)();                               \
  [[maybe_unused]] static const bool LT_TEST_CONCAT(lt_op_registered_, op) =                   \
      ::lt::test::register_op_test(::lt::OpId::op, &LT_TEST_CONCAT(lt_op_cases_, op));          \
  static ::lt::test::CaseList LT_TEST_CONCAT(lt_op_cases_, op)()
