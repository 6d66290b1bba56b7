#pragma once
// Reductions over any set of dims (ReductionAttrs).
//
// Each op is a chunk reducer for kernels::reduce_rows: reduce a contiguous chunk of a row to
// a state, combine states in row order, finish a state into the result. Integers and bools
// compute in i64; floats compute in f64 whatever their storage. f32 sums and means add each
// chunk in 32 f32 lanes, as PyTorch's f32 sums add in f32 (a lane takes at most 64 values of
// a chunk), and combine the chunks' totals in f64; f32 variances accumulate in f64.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <span>
#include <type_traits>

#include "lazytensor/ops/descriptor.hpp"
#include "lazytensor/ops/declarations.hpp"
#include "lazytensor/ops/declare.hpp"
#include "lazytensor/ops/op_attrs.hpp"
#include "lazytensor/ops/kernels/packet.hpp"
#include "lazytensor/ops/kernels/reduce.hpp"
#include "lazytensor/ops/reduction_grad.hpp"

namespace lt::reduction {

/// The value itself: lane_sum's default term.
struct Itself {
  template <class V> V operator()(V v) const { return v; }
};

namespace detail {
inline constexpr int sum_lanes = 32;
/// A lane's type: u64 for integers; f32 for f32 values, whose lanes take few values each and
/// whose f64 lanes would take twice the instructions; else the compute type.
template <class T, class In>
using SumAcc = std::conditional_t<std::is_integral_v<T>, std::uint64_t, std::conditional_t<std::is_same_v<In, float>, float, T>>;

/// acc[l] += term(x[32 b + l]) for `blocks` whole blocks of 32 values.
template <class Acc, class In, class Term>
[[gnu::always_inline]] inline void add_lane_blocks(Acc (&acc)[sum_lanes], const In* x, std::int64_t blocks, Term term) {
  for (std::int64_t b = 0; b < blocks; ++b, x += sum_lanes)
    for (int l = 0; l < sum_lanes; ++l) acc[l] += term(static_cast<Acc>(x[l]));
}

/// The lanes added as a fixed tree, then the tail.
template <class Acc>
[[gnu::always_inline]] inline Acc lane_total(Acc (&acc)[sum_lanes], Acc tail) {
  for (int width = sum_lanes / 2; width > 0; width /= 2)
    for (int l = 0; l < width; ++l) acc[l] += acc[l + width];
  return acc[0] + tail;
}
}  // namespace detail

/// Sum of term(x[i]) for n values in 32 interleaved lanes added as a fixed tree: value i goes
/// to lane i mod 32, the last n mod 32 to a tail added in order. Several independent vector
/// accumulators (one would wait on its own latency every step), and the same bits on every
/// run. Integers add as unsigned, wrapping like PyTorch's.
template <class T, class In = T, class Term = Itself>
T lane_sum(const In* x, std::int64_t n, Term term = {}) {
  using Acc = detail::SumAcc<T, In>;
  constexpr int lanes = detail::sum_lanes;
  Acc acc[lanes] = {};
  detail::add_lane_blocks(acc, x, n / lanes, term);
  Acc tail = 0;
  for (std::int64_t i = n - n % lanes; i < n; ++i) tail += term(static_cast<Acc>(x[i]));
  return static_cast<T>(detail::lane_total(acc, tail));
}

/// lane_sum of a chunk of n values given as pieces in order (the runs of a strided row):
/// the same lanes, so the same bits, however the chunk is cut.
template <class T, class In = T, class Term = Itself>
T lane_sum_pieces(std::span<const kernels::RowPiece> pieces, std::int64_t n, Term term = {}) {
  using Acc = detail::SumAcc<T, In>;
  constexpr int lanes = detail::sum_lanes;
  Acc acc[lanes] = {};
  Acc tail = 0;
  const std::int64_t whole = n - n % lanes;  // values before it go to the lanes
  // Values that fill part of a block go through a block of zeros, so that the accumulators
  // stay in registers: a lane starts at +0 and so never holds -0, and adding +0 keeps it.
  auto add_part = [&](const In* x, int from, int count) {
    Acc part[lanes] = {};
    for (int l = 0; l < count; ++l) part[from + l] = term(static_cast<Acc>(x[l]));
    for (int l = 0; l < lanes; ++l) acc[l] += part[l];
  };
  std::int64_t i = 0;
  for (const kernels::RowPiece& piece : pieces) {
    const In* x = static_cast<const In*>(piece.data);
    std::int64_t left = piece.n;
    if (const int from = static_cast<int>(i % lanes); from != 0 && i < whole) {
      const int count = static_cast<int>(std::min<std::int64_t>(left, lanes - from));
      add_part(x, from, count);
      x += count, i += count, left -= count;
    }
    const std::int64_t blocks = std::max<std::int64_t>(0, std::min(left, whole - i)) / lanes;
    detail::add_lane_blocks(acc, x, blocks, term);
    x += blocks * lanes, i += blocks * lanes, left -= blocks * lanes;
    if (const std::int64_t count = std::min(left, whole - i); count > 0) {
      add_part(x, 0, static_cast<int>(count));
      x += count, i += count, left -= count;
    }
    for (; left > 0; ++x, ++i, --left) tail += term(static_cast<Acc>(*x));
  }
  return static_cast<T>(detail::lane_total(acc, tail));
}

template <class T> bool is_nan(T x) {
  if constexpr (std::is_floating_point_v<T>) return std::isnan(x);
  else return false;
}

/// Shared rules: the reduced dims are any set, and every input dtype with kernels is taken.
struct AnyDims {
  static constexpr bool single_dim = false;
  static constexpr std::size_t float_attrs = 0;
  static constexpr bool integer_compute = true;  // false: integers are read as f64
  static constexpr bool exact_in_f32 = false;    // true: f32 rows reduce as f32, not widened
  static constexpr bool widens_f32_rows = false;  // true: f32 rows are read as they are and widened per element
};

struct Sum : AnyDims {
  static constexpr bool widens_f32_rows = true;
  template <class T> using State = T;
  static DType result_dtype(DType t) { return is_floating(t) ? t : DType::i64; }
  template <class T> static T identity() { return T(0); }
  template <class T, class In = T> static T reduce(const In* x, std::int64_t n, std::int64_t) { return lane_sum<T>(x, n); }
  template <class T, class In = T> static T reduce_pieces(std::span<const kernels::RowPiece> x, std::int64_t n, std::int64_t) {
    return lane_sum_pieces<T, In>(x, n);
  }
  template <class T> static void combine(T& a, const T& b) {
    if constexpr (std::is_integral_v<T>) a = static_cast<T>(static_cast<std::uint64_t>(a) + static_cast<std::uint64_t>(b));
    else a += b;
  }
  template <class T> static T finish(const T& s, std::int64_t, const Attrs&) { return s; }
};

struct Prod : AnyDims {
  template <class T> using State = T;
  static DType result_dtype(DType t) { return is_floating(t) ? t : DType::i64; }
  template <class T> static T identity() { return T(1); }
  template <class T> static T reduce(const T* x, std::int64_t n, std::int64_t) {
    T p = x[0];
    for (std::int64_t i = 1; i < n; ++i) combine(p, x[i]);
    return p;
  }
  template <class T> static void combine(T& a, const T& b) {
    if constexpr (std::is_integral_v<T>) a = static_cast<T>(static_cast<std::uint64_t>(a) * static_cast<std::uint64_t>(b));
    else a *= b;
  }
  template <class T> static T finish(const T& p, std::int64_t, const Attrs&) { return p; }
};

/// The input must be floating: PyTorch refuses to guess a result dtype for integers.
inline DType floating_input(DType t) {
  LT_CHECK(is_floating(t), "needs a floating input, got ", name(t), " (convert it with .to(lt::f32))");
  return t;
}

struct Mean : AnyDims {
  static constexpr bool widens_f32_rows = true;
  static constexpr bool integer_compute = false;
  template <class T> using State = T;
  static DType result_dtype(DType t) { return floating_input(t); }
  template <class T> static T identity() { return T(0); }
  template <class T, class In = T> static T reduce(const In* x, std::int64_t n, std::int64_t) { return lane_sum<T>(x, n); }
  template <class T, class In = T> static T reduce_pieces(std::span<const kernels::RowPiece> x, std::int64_t n, std::int64_t) {
    return lane_sum_pieces<T, In>(x, n);
  }
  template <class T> static void combine(T& a, const T& b) { a += b; }
  template <class T> static T finish(const T& s, std::int64_t count, const Attrs&) { return s / static_cast<T>(count); }
};

/// Count, mean and sum of squared deviations: chunks take two passes over their values,
/// and combine by Chan's rule, which stays accurate where sum-of-squares would cancel.
template <class T> struct Moments {
  T count, mean, m2;
};

template <bool Sqrt>
struct Variance : AnyDims {
  static constexpr std::size_t float_attrs = 1;  // the correction
  static constexpr bool integer_compute = false;
  template <class T> using State = Moments<T>;
  static DType result_dtype(DType t) { return floating_input(t); }
  template <class T> static Moments<T> identity() { return {0, 0, 0}; }
  template <class T> static Moments<T> reduce(const T* x, std::int64_t n, std::int64_t) {
    const T mean = lane_sum<T>(x, n) / static_cast<T>(n);
    const T m2 = lane_sum<T>(x, n, [mean](T v) { return (v - mean) * (v - mean); });
    return {static_cast<T>(n), mean, m2};
  }
  template <class T> static void combine(Moments<T>& a, const Moments<T>& b) {
    T count = a.count + b.count, delta = b.mean - a.mean;
    a.m2 += b.m2 + delta * delta * (a.count * b.count / count);
    a.mean += delta * (b.count / count);
    a.count = count;
  }
  /// Divides by max(0, N - correction), as PyTorch: no degrees of freedom give inf or NaN.
  template <class T> static T finish(const Moments<T>& s, std::int64_t count, const Attrs& a) {
    T dof = std::max(T(0), static_cast<T>(count) - static_cast<T>(*decode<ReductionAttrs>(a).correction));
    T v = s.m2 / dof;
    return Sqrt ? std::sqrt(v) : v;
  }
};

/// The largest value and the sum of exp(x - shift), where shift is that value unless it is
/// infinite (then 0, as in PyTorch, so that all -inf gives -inf and any +inf gives +inf).
template <class T> struct ExpSum {
  T max, sum;
};

struct LogSumExp : AnyDims {
  static constexpr bool integer_compute = false;
  template <class T> using State = ExpSum<T>;
  static DType result_dtype(DType t) { return is_floating(t) ? t : default_float; }
  template <class T> static T shift(T max) { return std::isinf(max) ? T(0) : max; }
  template <class T> static ExpSum<T> identity() { return {-std::numeric_limits<T>::infinity(), 0}; }
  template <class T> static ExpSum<T> reduce(const T* x, std::int64_t n, std::int64_t) {
    T m = x[0];
    for (std::int64_t i = 1; i < n; ++i) m = is_nan(m) || x[i] <= m ? m : x[i];
    T s = shift(m), sum = 0;
    for (std::int64_t i = 0; i < n; ++i) sum += std::exp(x[i] - s);
    return {m, sum};
  }
  template <class T> static void combine(ExpSum<T>& a, const ExpSum<T>& b) {
    T m = is_nan(a.max) || b.max <= a.max ? a.max : b.max, s = shift(m);
    auto rescaled = [s](const ExpSum<T>& e) { return e.sum == 0 ? T(0) : e.sum * std::exp(shift(e.max) - s); };
    a.sum = rescaled(a) + rescaled(b);
    a.max = m;
  }
  template <class T> static T finish(const ExpSum<T>& e, std::int64_t, const Attrs&) { return std::log(e.sum) + shift(e.max); }
};

/// Whether x wins over the current best: NaN wins over everything (PyTorch propagates it);
/// ties keep the earlier element.
template <bool Max, class T> bool beats(T x, T best) {
  if (is_nan(best)) return false;
  return is_nan(x) || (Max ? x > best : x < best);
}

/// amax, amin: no identity, so empty rows are refused when tracing.
template <bool Max>
struct Extreme : AnyDims {
  static constexpr bool exact_in_f32 = true;  // choosing an element rounds nothing
  template <class T> using State = T;
  static DType result_dtype(DType t) { return t; }
  /// One element at a time: NaN anywhere gives NaN, else the first extreme value.
  template <class T> static T reduce_each(const T* x, std::int64_t n) {
    T best = x[0];
    bool nan = false;
    for (std::int64_t i = 1; i < n; ++i) {  // branch-free, so that it vectorises
      nan |= is_nan(x[i]);
      best = (Max ? x[i] > best : x[i] < best) ? x[i] : best;
    }
    return nan || is_nan(x[0]) ? std::numeric_limits<T>::quiet_NaN() : best;
  }
  template <class T> static T reduce(const T* x, std::int64_t n, std::int64_t) {
    if constexpr (std::is_floating_point_v<T> && kernels::packet_lanes<T> > 1) {
      // One running extreme per lane, then the lanes in order: the same value as one at a
      // time (up to which of +0 and -0 wins a tie), in SIMD. pmax(acc, v) is acc < v ? v : acc
      // in one instruction. Four independent running extremes: one would wait on its own
      // latency. A row holding inf or NaN (its probe, the sum of v * 0, is then NaN) takes the
      // element-at-a-time form, which alone says NaN.
      using namespace Eigen::internal;
      using P = kernels::packet_t<T>;
      constexpr int lanes = kernels::packet_lanes<T>;
      constexpr int ways = 4;
      if (n >= ways * lanes) {
        P acc[ways], probe[ways];
        const P zero = pset1<P>(T(0));
        for (int w = 0; w < ways; ++w) {
          acc[w] = ploadu<P>(x + w * lanes);
          probe[w] = pmul(acc[w], zero);
        }
        std::int64_t i = ways * lanes;
        for (; i + ways * lanes <= n; i += ways * lanes)
          for (int w = 0; w < ways; ++w) {
            const P v = ploadu<P>(x + i + w * lanes);
            acc[w] = Max ? pmax(acc[w], v) : pmin(acc[w], v);
            probe[w] = pmadd(v, zero, probe[w]);
          }
        for (int w = 1; w < ways; ++w) {
          acc[0] = Max ? pmax(acc[0], acc[w]) : pmin(acc[0], acc[w]);
          probe[0] = padd(probe[0], probe[w]);
        }
        alignas(64) T lane[lanes];
        pstoreu(lane, acc[0]);
        T best = lane[0], probed = predux(probe[0]);
        for (int l = 1; l < lanes; ++l) best = (Max ? lane[l] > best : lane[l] < best) ? lane[l] : best;
        for (; i < n; ++i) {
          probed += x[i] * T(0);
          best = (Max ? x[i] > best : x[i] < best) ? x[i] : best;
        }
        return probed == T(0) ? best : reduce_each(x, n);
      }
    }
    return reduce_each(x, n);
  }
  template <class T> static void combine(T& a, const T& b) {
    if (beats<Max>(b, a)) a = b;
  }
  template <class T> static T finish(const T& v, std::int64_t, const Attrs&) { return v; }
};

template <class T> struct Candidate {
  T value;
  std::int64_t index;
};

/// argmax, argmin: the index of the first extreme element within the row (the flattened
/// index when every dim is reduced).
template <bool Max>
struct ArgExtreme : AnyDims {
  static constexpr bool single_dim = true;
  template <class T> using State = Candidate<T>;
  static DType result_dtype(DType t) {
    LT_CHECK(t != DType::boolean, "not supported for bool input");
    return DType::i64;
  }
  template <class T> static Candidate<T> reduce(const T* x, std::int64_t n, std::int64_t first) {
    std::int64_t at = 0;
    for (std::int64_t i = 1; i < n && !is_nan(x[at]); ++i)
      if (beats<Max>(x[i], x[at])) at = i;
    return {x[at], first + at};
  }
  template <class T> static void combine(Candidate<T>& a, const Candidate<T>& b) {
    if (beats<Max>(b.value, a.value)) a = b;
  }
  template <class T> static std::int64_t finish(const Candidate<T>& c, std::int64_t, const Attrs&) { return c.index; }
};

/// all, any: truthiness of any dtype (NaN is true); the result is bool.
template <bool All>
struct Truth : AnyDims {
  template <class T> using State = bool;
  static DType result_dtype(DType) { return DType::boolean; }
  template <class T> static bool identity() { return All; }
  template <class T> static bool reduce(const T* x, std::int64_t n, std::int64_t) {
    for (std::int64_t i = 0; i < n; ++i)
      if ((x[i] != T(0)) != All) return !All;
    return All;
  }
  template <class T> static void combine(bool& a, const bool& b) { a = All ? a && b : a || b; }
  template <class T> static bool finish(const bool& v, std::int64_t, const Attrs&) { return v; }
};

/// A state from the driver's raw bytes (copied: the bytes are not an S object).
template <class S> S load_state(const void* p) {
  S s;
  std::memcpy(&s, p, sizeof s);
  return s;
}

/// The type-erased reducer of Op computing in T.
/// `In`: the type rows are gathered as (the compute type T unless the op widens f32 rows
/// itself, which spares a converted copy of each row).
template <class Op, class T, class In = T>
kernels::Reducer make_reducer() {
  using S = typename Op::template State<T>;
  static_assert(sizeof(S) <= kernels::max_reduce_state && std::is_trivially_copyable_v<S>);
  using R = decltype(Op::template finish<T>(S{}, 0, Attrs{}));
  kernels::Reducer r{dtype_v<In>, dtype_v<R>, nullptr, nullptr, nullptr, nullptr, nullptr};
  if constexpr (requires { Op::template identity<T>(); })
    r.identity = [](void* state) {
      S s = Op::template identity<T>();
      std::memcpy(state, &s, sizeof s);
    };
  r.reduce = [](const void* row, std::int64_t n, std::int64_t first, void* state) {
    S s;
    if constexpr (std::is_same_v<In, T>) s = Op::template reduce<T>(static_cast<const T*>(row), n, first);
    else s = Op::template reduce<T, In>(static_cast<const In*>(row), n, first);
    std::memcpy(state, &s, sizeof s);
  };
  if constexpr (requires { Op::template reduce_pieces<T, In>(std::span<const kernels::RowPiece>{}, 0, 0); })
    r.reduce_pieces = [](std::span<const kernels::RowPiece> pieces, std::int64_t n, std::int64_t first, void* state) {
      S s = Op::template reduce_pieces<T, In>(pieces, n, first);
      std::memcpy(state, &s, sizeof s);
    };
  r.combine = [](void* acc, const void* next) {
    S a = load_state<S>(acc);
    Op::template combine<T>(a, load_state<S>(next));
    std::memcpy(acc, &a, sizeof a);
  };
  r.finish = [](const void* state, std::int64_t count, const Attrs& attrs, void* result) {
    R v = Op::template finish<T>(load_state<S>(state), count, attrs);
    std::memcpy(result, &v, sizeof v);
  };
  return r;
}

/// The reduced dims of attrs.
inline AttrWords reduced_dims(const Attrs& a) { return decode<ReductionAttrs>(a).dims; }

/// The attributes of the same reduction over dim 1 of a [rows, row] view, where the rows are
/// the kept dims flattened and a row is the reduced trailing dims flattened: the form in
/// which fused executors run a reduction whose reduced dims are trailing.
inline Attrs attrs_over_rows(const Attrs& a) {
  static constexpr std::int64_t row_dim[] = {1};
  return encode(ReductionAttrs{true, row_dim, decode<ReductionAttrs>(a).correction});
}

template <class Op>
Meta reduce_infer(std::span<const Meta> in, const Attrs& attrs) {
  const Meta& x = in[0];
  const ReductionAttrs a = decode<ReductionAttrs>(attrs);
  LT_CHECK(a.correction.has_value() == (Op::float_attrs == 1), "takes ", Op::float_attrs == 1 ? "a" : "no",
           " correction");
  AttrWords dims = a.dims;
  LT_CHECK(!Op::single_dim || dims.size() <= 1, "takes at most one dim, got ", dims.size());
  int rank = x.shape.rank();
  std::array<bool, max_rank> reduced{};
  for (std::size_t k = 0; k < dims.size(); ++k) {
    LT_CHECK(dims[k] >= 0 && dims[k] < rank, "dim ", dims[k], " is out of range for rank ", rank);
    LT_CHECK(k == 0 || dims[k] > dims[k - 1], "dims must be sorted and unique");
    reduced[static_cast<std::size_t>(dims[k])] = true;
  }
  const bool keepdim = a.keepdim;
  Shape out;
  std::int64_t row_size = 1;
  for (int d = 0; d < rank; ++d) {
    bool r = dims.empty() || reduced[static_cast<std::size_t>(d)];
    if (r) row_size *= x.shape[d];
    if (!r) out.push_back(x.shape[d]);
    else if (keepdim) out.push_back(1);
  }
  if constexpr (!requires { Op::template identity<double>(); })
    LT_CHECK(row_size > 0, "cannot reduce an empty dim without identity (input shape ", x.shape, ")");
  return {out, Op::result_dtype(x.dtype)};
}

template <class Op>
void reduce_kernel(std::span<const View> in, const View& out, const Attrs& a) {
  auto run = [&]<class T>(Tag<T>) { kernels::reduce_rows(in[0], out, reduced_dims(a), a, make_reducer<Op, T>()); };
  if constexpr (Op::exact_in_f32)
    if (in[0].dtype == DType::f32) return run(Tag<float>{});
  if constexpr (Op::widens_f32_rows)
    if (in[0].dtype == DType::f32)
      return kernels::reduce_rows(in[0], out, reduced_dims(a), a, make_reducer<Op, double, float>());
  if constexpr (Op::integer_compute)
    if (!is_floating(in[0].dtype)) return run(Tag<std::int64_t>{});
  run(Tag<double>{});
}

/// One row of n >= 1 contiguous values of In, reduced by Op computing in T: chunk by chunk in
/// the driver's chunks and combined in row order, as kernels::reduce_rows reduces each row.
template <class Op, class T, class In>
void reduce_one_row(const void* row, std::int64_t n, const Attrs& a, void* dst) {
  const In* x = static_cast<const In*>(row);
  auto chunk = [&](std::int64_t r0) {
    std::int64_t m = std::min(kernels::reduce_chunk, n - r0);
    if constexpr (std::is_same_v<In, T>) return Op::template reduce<T>(x + r0, m, r0);
    else return Op::template reduce<T, In>(x + r0, m, r0);
  };
  auto state = chunk(0);
  for (std::int64_t r0 = kernels::reduce_chunk; r0 < n; r0 += kernels::reduce_chunk) Op::template combine<T>(state, chunk(r0));
  auto v = Op::template finish<T>(state, n, a);
  std::memcpy(dst, &v, sizeof v);
}

/// The bound form of reduce_kernel<Op>: the same compute type, for rows already read as it.
template <class Op>
bool reduce_bind(std::span<const Meta> in, const Meta&, const Attrs&, BoundKernel& into) {
  auto use = [&]<class T, class In>(Tag<T>, Tag<In>) {
    into.reduce = &reduce_one_row<Op, T, In>;
    into.input = dtype_v<In>;
    into.result = dtype_v<decltype(Op::template finish<T>(typename Op::template State<T>{}, 0, Attrs{}))>;
    return true;
  };
  const DType t = in[0].dtype;
  if constexpr (Op::exact_in_f32)
    if (t == DType::f32) return use(Tag<float>{}, Tag<float>{});
  if constexpr (Op::widens_f32_rows)
    if (t == DType::f32) return use(Tag<double>{}, Tag<float>{});
  if constexpr (Op::integer_compute)
    if (!is_floating(t)) return use(Tag<std::int64_t>{}, Tag<std::int64_t>{});
  return use(Tag<double>{}, Tag<double>{});
}

/// The descriptor of the reduction Op.
template <class Op>
constexpr OpDesc reduction_op(GradFn grad) {
  return OpDesc{.kind = OpKind::reduction,
                .arity = 1,
                .infer = &reduce_infer<Op>,
                .kernel = &reduce_kernel<Op>,
                .grad = grad,
                .bind = &reduce_bind<Op>};
}

LT_DEFINE_OP(sum, reduction_op<Sum>(&grad::rule::sum));
LT_DEFINE_OP(mean, reduction_op<Mean>(&grad::rule::mean));
LT_DEFINE_OP(prod, reduction_op<Prod>(&grad::rule::prod));
LT_DEFINE_OP(amax, reduction_op<Extreme<true>>(&grad::rule::amax));
LT_DEFINE_OP(amin, reduction_op<Extreme<false>>(&grad::rule::amin));
LT_DEFINE_OP(argmax, reduction_op<ArgExtreme<true>>(&not_differentiable));
LT_DEFINE_OP(argmin, reduction_op<ArgExtreme<false>>(&not_differentiable));
LT_DEFINE_OP(var, reduction_op<Variance<false>>(&grad::rule::var));
LT_DEFINE_OP(std_dev, reduction_op<Variance<true>>(&grad::rule::std_dev));
LT_DEFINE_OP(logsumexp, reduction_op<LogSumExp>(&grad::rule::logsumexp));
LT_DEFINE_OP(all_true, reduction_op<Truth<true>>(&not_differentiable));
LT_DEFINE_OP(any_true, reduction_op<Truth<false>>(&not_differentiable));

}  // namespace lt::reduction
