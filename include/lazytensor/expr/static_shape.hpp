#pragma once
// Compile-time shapes: lt::extents<64, 784> and the shape rules of the ops that static-shape
// tensors support. A rule that does not hold fails a static_assert whose message names the
// op; the compiler shows both shapes in the check's template arguments, e.g.
//   In instantiation of 'struct lt::static_shape::matmul<lt::extents<64, 784>, lt::extents<100, 10>>'
//   static assertion failed: lt::matmul: the inner extents of the two shapes differ
#include <array>
#include <cstdint>
#include <utility>

namespace lt {

template <std::int64_t... E>
struct extents {
  static constexpr std::size_t rank = sizeof...(E);
  static constexpr std::array<std::int64_t, sizeof...(E)> dims{E...};
  static constexpr std::int64_t numel = (std::int64_t{1} * ... * E);
};

namespace static_shape {

template <class X> inline constexpr bool is_extents = false;
template <std::int64_t... E> inline constexpr bool is_extents<extents<E...>> = true;

namespace detail {
template <auto A, class = std::make_index_sequence<A.size()>> struct to_extents;
template <auto A, std::size_t... I> struct to_extents<A, std::index_sequence<I...>> {
  using type = extents<A[I]...>;
};

template <std::size_t N> struct Result {
  std::array<std::int64_t, N> dims{};
  bool ok = true;
};

/// Right-aligned broadcast of two shapes, as for tensors.
template <class A, class B>
constexpr auto broadcast() {
  constexpr std::size_t n = A::rank > B::rank ? A::rank : B::rank;
  Result<n> r;
  for (std::size_t k = 0; k < n; ++k) {
    std::int64_t a = k < n - A::rank ? 1 : A::dims[k - (n - A::rank)];
    std::int64_t b = k < n - B::rank ? 1 : B::dims[k - (n - B::rank)];
    r.ok = r.ok && (a == b || a == 1 || b == 1);
    r.dims[k] = a == 1 ? b : a;
  }
  return r;
}

/// torch.matmul's shape rule for 1-D and 2-D operands and batches of matrices.
template <class A, class B>
constexpr auto matmul() {
  constexpr bool av = A::rank == 1, bv = B::rank == 1;
  using AM = std::conditional_t<av, extents<1, (av ? A::dims[0] : 1)>, A>;
  using BM = std::conditional_t<bv, extents<(bv ? B::dims[0] : 1), 1>, B>;
  constexpr std::size_t batch = (AM::rank > BM::rank ? AM::rank : BM::rank) - 2;
  constexpr std::size_t n = batch + 2 - av - bv;
  Result<n> r;
  std::array<std::int64_t, batch + 2> full{};
  for (std::size_t k = 0; k < batch; ++k) {
    std::int64_t a = k + AM::rank < batch + 2 ? 1 : AM::dims[k + AM::rank - batch - 2];
    std::int64_t b = k + BM::rank < batch + 2 ? 1 : BM::dims[k + BM::rank - batch - 2];
    r.ok = r.ok && (a == b || a == 1 || b == 1);
    full[k] = a == 1 ? b : a;
  }
  r.ok = r.ok && AM::dims[AM::rank - 1] == BM::dims[BM::rank - 2];
  full[batch] = AM::dims[AM::rank - 2];
  full[batch + 1] = BM::dims[BM::rank - 1];
  std::size_t out = 0;
  for (std::size_t k = 0; k < batch + 2; ++k)
    if (!(av && k == batch) && !(bv && k == batch + 1)) r.dims[out++] = full[k];
  return r;
}

/// A reduction over dim D (negative counts from the end).
template <class X, std::int64_t D, bool Keep>
constexpr auto reduce() {
  constexpr bool in_range = D >= -static_cast<std::int64_t>(X::rank) && D < static_cast<std::int64_t>(X::rank);
  constexpr std::size_t d = in_range ? static_cast<std::size_t>(D < 0 ? D + static_cast<std::int64_t>(X::rank) : D) : 0;
  Result<Keep ? X::rank : (X::rank > 0 ? X::rank - 1 : 0)> r;
  r.ok = in_range;
  std::size_t out = 0;
  for (std::size_t k = 0; k < X::rank; ++k) {
    if (k != d) r.dims[out++] = X::dims[k];
    else if (Keep) r.dims[out++] = 1;
  }
  return r;
}

/// A reshape to To, where one extent of To may be -1.
template <class X, class To>
constexpr auto reshape() {
  Result<To::rank> r;
  std::int64_t known = 1;
  int unknown = 0;
  for (std::int64_t e : To::dims) {
    if (e == -1) ++unknown;
    else known *= e;
  }
  r.ok = unknown <= 1 && known > 0 && (unknown ? X::numel % known == 0 : X::numel == known);
  for (std::size_t k = 0; k < To::rank; ++k) r.dims[k] = To::dims[k] == -1 && known > 0 ? X::numel / known : To::dims[k];
  return r;
}
}  // namespace detail

/// The result of elementwise op Op on shapes A and B.
template <const auto& Op, class A, class B>
struct elementwise {
  static constexpr auto r = detail::broadcast<A, B>();
  static_assert(r.ok, "lt elementwise op: the two shapes do not broadcast (they differ in a dim where neither is 1)");
  using type = typename detail::to_extents<r.dims>::type;
};

template <class A, class B>
struct matmul {
  static_assert(A::rank >= 1 && B::rank >= 1, "lt::matmul: operands must have at least one dim");
  static constexpr auto r = detail::matmul<A, B>();
  static_assert(r.ok, "lt::matmul: the inner extents of the two shapes differ (or their batch dims do not broadcast)");
  using type = typename detail::to_extents<r.dims>::type;
};

/// x [..., in] @ weight [out, in]^T + bias [out].
template <class X, class W, class Bias = void>
struct linear {
  static_assert(W::rank == 2, "lt::linear: the weight must be [out_features, in_features]");
  static_assert(X::rank >= 1 && X::dims[X::rank - 1] == W::dims[1],
                "lt::linear: the input's last extent differs from the weight's in_features");
  static constexpr bool bias_ok = [] {
    if constexpr (std::is_void_v<Bias>) return true;
    else return Bias::rank == 1 && Bias::dims[0] == W::dims[0];
  }();
  static_assert(bias_ok, "lt::linear: the bias must be [out_features] of the weight");
  static constexpr auto dims = [] {
    std::array<std::int64_t, X::rank> d = X::dims;
    d[X::rank - 1] = W::dims[0];
    return d;
  }();
  using type = typename detail::to_extents<dims>::type;
};

/// x [N, C, H, W] conv weight [O, C / groups, KH, KW] (+ bias [O]).
template <class X, class W, std::int64_t Stride, std::int64_t Padding, std::int64_t Dilation, std::int64_t Groups,
          class Bias = void>
struct conv2d {
  static_assert(X::rank == 4, "lt::conv2d: the input must be [N, C, H, W]");
  static_assert(W::rank == 4, "lt::conv2d: the weight must be [out_channels, in_channels / groups, KH, KW]");
  static_assert(Stride > 0 && Dilation > 0 && Padding >= 0 && Groups > 0,
                "lt::conv2d: stride, dilation and groups must be positive, padding not negative");
  static_assert(X::dims[1] == W::dims[1] * Groups,
                "lt::conv2d: the input's channels differ from the weight's in_channels times groups");
  static_assert(W::dims[0] % Groups == 0, "lt::conv2d: out_channels must divide by groups");
  static constexpr std::int64_t span_h = Dilation * (W::dims[2] - 1) + 1, span_w = Dilation * (W::dims[3] - 1) + 1;
  static_assert(X::dims[2] + 2 * Padding >= span_h && X::dims[3] + 2 * Padding >= span_w,
                "lt::conv2d: the kernel is larger than the padded input");
  static constexpr bool bias_ok = [] {
    if constexpr (std::is_void_v<Bias>) return true;
    else return Bias::rank == 1 && Bias::dims[0] == W::dims[0];
  }();
  static_assert(bias_ok, "lt::conv2d: the bias must be [out_channels] of the weight");
  using type = extents<X::dims[0], W::dims[0], (X::dims[2] + 2 * Padding - span_h) / Stride + 1,
                       (X::dims[3] + 2 * Padding - span_w) / Stride + 1>;
};

/// Reduction Op over dim D.
template <const auto& Op, class X, std::int64_t D, bool Keep>
struct reduce {
  static constexpr auto r = detail::reduce<X, D, Keep>();
  static_assert(r.ok, "lt reduction: the dim is out of range for the shape");
  using type = typename detail::to_extents<r.dims>::type;
};

template <class X, class To>
struct reshape {
  static constexpr auto r = detail::reshape<X, To>();
  static_assert(r.ok, "lt::reshape: the shapes hold different numbers of elements");
  using type = typename detail::to_extents<r.dims>::type;
};

}  // namespace static_shape
}  // namespace lt
