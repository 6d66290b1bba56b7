#pragma once
// Shape (rank 0 to 8), strides, broadcasting and dim wrapping.
#include <algorithm>
#include <array>
#include <cstdint>
#include <initializer_list>
#include <ostream>
#include <span>
#include <string>
#include <vector>

#include "lazytensor/core/error.hpp"

namespace lt {

inline constexpr int max_rank = 8;

/// A fixed-capacity list of extents or strides: no allocation, cheap to copy and hash.
class Dims {
 public:
  constexpr Dims() = default;
  /// Extents listed in order; raises lt::Error past rank 8.
  constexpr Dims(std::initializer_list<std::int64_t> v) { assign(v.begin(), v.size()); }
  /// Extents from a span; raises lt::Error past rank 8.
  explicit Dims(std::span<const std::int64_t> v) { assign(v.data(), v.size()); }
  /// Extents from a vector; raises lt::Error past rank 8.
  explicit Dims(const std::vector<std::int64_t>& v) { assign(v.data(), v.size()); }

  /// `rank` copies of `value`.
  static constexpr Dims filled(int rank, std::int64_t value) {
    Dims d;
    d.rank_ = check_rank(rank);
    for (int i = 0; i < rank; ++i) d.v_[i] = value;
    return d;
  }

  /// The number of dims.
  constexpr int rank() const { return rank_; }
  /// The number of dims, as a size.
  constexpr std::size_t size() const { return static_cast<std::size_t>(rank_); }
  /// Whether the rank is 0.
  constexpr bool empty() const { return rank_ == 0; }
  /// Dim `i` (0 <= i < rank(); unchecked).
  constexpr std::int64_t& operator[](int i) { return v_[i]; }
  /// Dim `i` (0 <= i < rank(); unchecked).
  constexpr std::int64_t operator[](int i) const { return v_[i]; }
  /// The first dim.
  constexpr const std::int64_t* begin() const { return v_.data(); }
  /// Past the last dim.
  constexpr const std::int64_t* end() const { return v_.data() + rank_; }
  /// The first dim.
  constexpr std::int64_t* begin() { return v_.data(); }
  /// Past the last dim.
  constexpr std::int64_t* end() { return v_.data() + rank_; }
  /// The last dim (rank >= 1).
  constexpr std::int64_t back() const { return v_[rank_ - 1]; }
  /// Appends a dim; raises lt::Error past rank 8.
  constexpr void push_back(std::int64_t x) {
    check_rank(rank_ + 1);
    v_[rank_++] = x;
  }
  /// Inserts `x` before dim `pos`; raises lt::Error past rank 8.
  constexpr void insert(int pos, std::int64_t x) {
    check_rank(rank_ + 1);
    for (int i = rank_; i > pos; --i) v_[i] = v_[i - 1];
    v_[pos] = x;
    ++rank_;
  }
  /// Removes dim `pos`.
  constexpr void erase(int pos) {
    for (int i = pos; i + 1 < rank_; ++i) v_[i] = v_[i + 1];
    --rank_;
  }
  /// The dims as a vector.
  std::vector<std::int64_t> vec() const { return {begin(), end()}; }
  /// The dims as a span.
  std::span<const std::int64_t> span() const { return {v_.data(), size()}; }

  /// Product of the extents (1 for rank 0).
  constexpr std::int64_t numel() const {
    std::int64_t n = 1;
    for (int i = 0; i < rank_; ++i) n *= v_[i];
    return n;
  }

  /// Same rank and the same dims.
  friend constexpr bool operator==(const Dims& a, const Dims& b) {
    if (a.rank_ != b.rank_) return false;
    for (int i = 0; i < a.rank_; ++i)
      if (a.v_[i] != b.v_[i]) return false;
    return true;
  }

  /// "[2, 3]".
  std::string str() const {
    std::string s = "[";
    for (int i = 0; i < rank_; ++i) s += (i ? ", " : "") + std::to_string(v_[i]);
    return s + "]";
  }
  /// Writes str().
  friend std::ostream& operator<<(std::ostream& os, const Dims& d) { return os << d.str(); }

 private:
  static constexpr int check_rank(std::size_t r) {
    if (r > static_cast<std::size_t>(max_rank)) fail("rank ", r, " exceeds the maximum rank ", max_rank);
    return static_cast<int>(r);
  }
  constexpr void assign(const std::int64_t* p, std::size_t n) {
    rank_ = check_rank(n);
    for (std::size_t i = 0; i < n; ++i) v_[i] = p[i];
  }
  std::array<std::int64_t, max_rank> v_{};
  int rank_ = 0;
};

using Shape = Dims;
using Strides = Dims;

/// Row-major strides, in elements. Meaningful only for a shape whose element count fits
/// 64 bits (callers check it with checked_numel); the product wraps rather than overflows.
constexpr Strides contiguous_strides(const Shape& s) {
  Strides st = Dims::filled(s.rank(), 1);
  std::uint64_t acc = 1;
  for (int i = s.rank() - 1; i >= 0; --i) {
    st[i] = static_cast<std::int64_t>(acc);
    acc *= static_cast<std::uint64_t>(s[i] > 0 ? s[i] : 1);
  }
  return st;
}

/// True when a view with these strides walks memory in row-major order without gaps.
constexpr bool is_contiguous(const Shape& s, const Strides& st) {
  std::int64_t expected = 1;
  for (int i = s.rank() - 1; i >= 0; --i) {
    if (s[i] == 1) continue;
    if (s[i] == 0) return true;
    if (st[i] != expected) return false;
    expected *= s[i];
  }
  return true;
}

/// NumPy broadcasting; returns false when the shapes do not broadcast.
inline bool try_broadcast(const Shape& a, const Shape& b, Shape& out) {
  int r = std::max(a.rank(), b.rank());
  out = Dims::filled(r, 1);
  for (int i = 0; i < r; ++i) {
    std::int64_t x = i < r - a.rank() ? 1 : a[i - (r - a.rank())];
    std::int64_t y = i < r - b.rank() ? 1 : b[i - (r - b.rank())];
    if (x != y && x != 1 && y != 1) return false;
    out[i] = x == 1 ? y : x;
  }
  return true;
}

/// Strides that read `in` (shape, strides) as if it had the broadcast shape `out`.
inline Strides broadcast_strides(const Shape& in, const Strides& st, const Shape& out) {
  Strides r = Dims::filled(out.rank(), 0);
  int off = out.rank() - in.rank();
  for (int i = 0; i < in.rank(); ++i) r[i + off] = in[i] == 1 && out[i + off] != 1 ? 0 : st[i];
  return r;
}

/// Wraps a possibly negative dim into [0, rank); rank-0 tensors accept dims -1 and 0.
inline int wrap_dim(std::int64_t dim, int rank) {
  int r = rank == 0 ? 1 : rank;
  LT_CHECK(dim >= -r && dim < r, "dim ", dim, " is out of range for rank ", rank);
  return static_cast<int>(dim < 0 ? dim + r : dim);
}

/// A 1-d shape of no elements: the shape that cat skips, as PyTorch does.
inline bool is_legacy_empty(const Shape& s) { return s.rank() == 1 && s[0] == 0; }

}  // namespace lt
