#pragma once
// Movement ops. Views (reshape of contiguous data, permute, expand, slice) alias their input
// where they can; their kernel is the same view followed by a copy.
#include <array>
#include <numeric>

#include "lazytensor/ops/descriptor.hpp"
#include "lazytensor/ops/kernels/strided.hpp"

namespace lt::movement {

/// Kernel of a view op: the view of the input, copied into the contiguous output.
template <ViewFn view_of>
void copy_view(std::span<const View> in, const View& out, const Attrs& a) {
  View v;
  view_of(in, a, v);
  kernels::copy_into(v, out);
}

// reshape. attrs.ints: the target shape, -1 already resolved by the caller.
inline Meta reshape_infer(std::span<const Meta> in, const Attrs& a) {
  Shape s(std::span<const std::int64_t>(a.ints));
  for (std::int64_t e : s) LT_CHECK(e >= 0, "negative extent in target shape ", s);
  LT_CHECK(s.numel() == in[0].shape.numel(), "shape ", s, " has ", s.numel(), " elements, the input ",
           in[0].shape.numel());
  return {s, in[0].dtype};
}
inline bool reshape_view(std::span<const View> in, const Attrs& a, View& out) {
  if (!in[0].contiguous()) return false;
  out = in[0];
  out.shape = Shape(std::span<const std::int64_t>(a.ints));
  out.strides = contiguous_strides(out.shape);
  return true;
}
inline void reshape_kernel(std::span<const View> in, const View& out, const Attrs&) {
  View as_input = out;  // the output's memory, walked in the input's shape
  as_input.shape = in[0].shape;
  as_input.strides = contiguous_strides(in[0].shape);
  kernels::copy_into(in[0], as_input);
}

// permute. attrs.ints: a permutation of the dims, non-negative.
inline Meta permute_infer(std::span<const Meta> in, const Attrs& a) {
  const Shape& s = in[0].shape;
  LT_CHECK(static_cast<int>(a.ints.size()) == s.rank(), "permutation of ", a.ints.size(), " dims for rank ", s.rank());
  std::array<bool, max_rank> seen{};
  Shape out = s;
  for (int k = 0; k < s.rank(); ++k) {
    std::int64_t d = a.ints[static_cast<std::size_t>(k)];
    LT_CHECK(d >= 0 && d < s.rank() && !seen[static_cast<std::size_t>(d)], "dims do not form a permutation");
    seen[static_cast<std::size_t>(d)] = true;
    out[k] = s[static_cast<int>(d)];
  }
  return {out, in[0].dtype};
}
inline bool permute_view(std::span<const View> in, const Attrs& a, View& out) {
  out = in[0];
  for (int k = 0; k < in[0].shape.rank(); ++k) {
    auto d = static_cast<int>(a.ints[static_cast<std::size_t>(k)]);
    out.shape[k] = in[0].shape[d];
    out.strides[k] = in[0].strides[d];
  }
  return true;
}

// expand. attrs.ints: the target shape, -1 already resolved.
inline Meta expand_infer(std::span<const Meta> in, const Attrs& a) {
  Shape target(std::span<const std::int64_t>(a.ints));
  const Shape& s = in[0].shape;
  LT_CHECK(target.rank() >= s.rank(), "cannot expand rank ", s.rank(), " to rank ", target.rank());
  for (int k = 0; k < s.rank(); ++k) {
    std::int64_t have = s[k], want = target[k + target.rank() - s.rank()];
    LT_CHECK(have == want || have == 1, "cannot expand ", s, " to ", target);
  }
  for (std::int64_t e : target) LT_CHECK(e >= 0, "negative extent in ", target);
  return {target, in[0].dtype};
}
inline bool expand_view(std::span<const View> in, const Attrs& a, View& out) {
  out = in[0];
  out.shape = Shape(std::span<const std::int64_t>(a.ints));
  out.strides = broadcast_strides(in[0].shape, in[0].strides, out.shape);
  return true;
}

// slice. attrs.ints: {dim, start, end, step}, already wrapped and clamped: 0 <= start <= end.
inline Meta slice_infer(std::span<const Meta> in, const Attrs& a) {
  const Shape& s = in[0].shape;
  LT_CHECK(s.rank() > 0, "cannot slice a zero-dim tensor");
  std::int64_t dim = a.ints[0], start = a.ints[1], end = a.ints[2], step = a.ints[3];
  LT_CHECK(dim >= 0 && dim < s.rank(), "dim ", dim, " is out of range for rank ", s.rank());
  LT_CHECK(step > 0, "step must be positive, got ", step);
  LT_CHECK(0 <= start && start <= end && end <= s[static_cast<int>(dim)], "range [", start, ", ", end,
           ") is outside dim ", dim, " of size ", s[static_cast<int>(dim)]);
  Shape out = s;
  out[static_cast<int>(dim)] = (end - start + step - 1) / step;
  return {out, in[0].dtype};
}
inline bool slice_view(std::span<const View> in, const Attrs& a, View& out) {
  auto dim = static_cast<int>(a.ints[0]);
  std::int64_t start = a.ints[1], end = a.ints[2], step = a.ints[3];
  out = in[0];
  out.data += start * in[0].strides[dim] * static_cast<std::int64_t>(itemsize(in[0].dtype));
  out.shape[dim] = (end - start + step - 1) / step;
  out.strides[dim] = in[0].strides[dim] * step;
  return true;
}

inline constexpr OpDesc reshape{OpId::reshape, "reshape", OpKind::movement, 1, &reshape_infer, &reshape_kernel, &reshape_view};
inline constexpr OpDesc permute{OpId::permute, "permute", OpKind::movement, 1, &permute_infer, &copy_view<&permute_view>, &permute_view};
inline constexpr OpDesc expand{OpId::expand, "expand", OpKind::movement, 1, &expand_infer, &copy_view<&expand_view>, &expand_view};
inline constexpr OpDesc slice{OpId::slice, "slice", OpKind::movement, 1, &slice_infer, &copy_view<&slice_view>, &slice_view};

inline constexpr std::array all = {&reshape, &permute, &expand, &slice};

}  // namespace lt::movement
