#pragma once
// Movement ops. Views (reshape of contiguous data, permute, expand, slice) alias their input
// where they can; their kernel is the same view followed by a copy. The copying ops (cat,
// pad, flip, tril, triu, contiguous) only move bytes, through kernels::copy_strided.
#include <array>
#include <cstring>
#include <numeric>

#include "lazytensor/ops/descriptor.hpp"
#include "lazytensor/ops/declarations.hpp"
#include "lazytensor/ops/declare.hpp"
#include "lazytensor/ops/kernels/copy.hpp"
#include "lazytensor/ops/kernels/strided.hpp"
#include "lazytensor/ops/movement_grad.hpp"
#include "lazytensor/ops/op_attrs.hpp"

namespace lt::movement {

/// Kernel of a view op: the view of the input, copied into the contiguous output.
template <ViewFn view_of>
void copy_view(std::span<const View> in, const View& out, const Attrs& a) {
  View v;
  view_of(in, a, v);
  kernels::copy_into(v, out);
}

// reshape. DimsAttrs: the target shape, -1 already resolved by the caller.
inline Meta reshape_infer(std::span<const Meta> in, const Attrs& a) {
  Shape s(decode<DimsAttrs>(a).dims);
  for (std::int64_t e : s) LT_CHECK(e >= 0, "negative extent in target shape ", s);
  LT_CHECK(s.numel() == in[0].shape.numel(), "shape ", s, " has ", s.numel(), " elements, the input ",
           in[0].shape.numel());
  return {s, in[0].dtype};
}
/// Aliases whenever strides for the new shape exist (as torch's computeStride): each run of
/// input dims that the reshape merges or splits must be contiguous within itself. So squeeze,
/// unsqueeze and select of strided values stay views.
inline bool reshape_view(std::span<const View> in, const Attrs& a, View& out) {
  const View& v = in[0];
  Shape target(decode<DimsAttrs>(a).dims);
  Strides strides = contiguous_strides(target);
  if (v.numel() > 0 && !v.contiguous()) {
    int t = target.rank() - 1;
    std::int64_t base = v.strides[v.shape.rank() - 1], run = 1, covered = 1;
    for (int d = v.shape.rank() - 1; d >= 0; --d) {
      run *= v.shape[d];
      bool run_ends = d == 0 || (v.shape[d - 1] != 1 && v.strides[d - 1] != run * base);
      if (!run_ends) continue;
      while (t >= 0 && (covered < run || target[t] == 1)) {
        strides[t] = covered * base;
        covered *= target[t--];
      }
      if (covered != run) return false;
      if (d > 0) base = v.strides[d - 1], run = 1, covered = 1;
    }
    if (t != -1) return false;
  }
  out = v;
  out.shape = target;
  out.strides = strides;
  return true;
}
inline void reshape_kernel(std::span<const View> in, const View& out, const Attrs&) {
  View as_input = out;  // the output's memory, walked in the input's shape
  as_input.shape = in[0].shape;
  as_input.strides = contiguous_strides(in[0].shape);
  kernels::copy_into(in[0], as_input);
}

// permute. DimsAttrs: a permutation of the dims, non-negative.
inline Meta permute_infer(std::span<const Meta> in, const Attrs& a) {
  const Shape& s = in[0].shape;
  AttrWords perm = decode<DimsAttrs>(a).dims;
  LT_CHECK(static_cast<int>(perm.size()) == s.rank(), "permutation of ", perm.size(), " dims for rank ", s.rank());
  std::array<bool, max_rank> seen{};
  Shape out = s;
  for (int k = 0; k < s.rank(); ++k) {
    std::int64_t d = perm[static_cast<std::size_t>(k)];
    LT_CHECK(d >= 0 && d < s.rank() && !seen[static_cast<std::size_t>(d)], "dims do not form a permutation");
    seen[static_cast<std::size_t>(d)] = true;
    out[k] = s[static_cast<int>(d)];
  }
  return {out, in[0].dtype};
}
inline bool permute_view(std::span<const View> in, const Attrs& a, View& out) {
  out = in[0];
  AttrWords perm = decode<DimsAttrs>(a).dims;
  for (int k = 0; k < in[0].shape.rank(); ++k) {
    auto d = static_cast<int>(perm[static_cast<std::size_t>(k)]);
    out.shape[k] = in[0].shape[d];
    out.strides[k] = in[0].strides[d];
  }
  return true;
}

// expand. DimsAttrs: the target shape, -1 already resolved.
inline Meta expand_infer(std::span<const Meta> in, const Attrs& a) {
  Shape target(decode<DimsAttrs>(a).dims);
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
  out.shape = Shape(decode<DimsAttrs>(a).dims);
  out.strides = broadcast_strides(in[0].shape, in[0].strides, out.shape);
  return true;
}

// slice. SliceAttrs.
inline Meta slice_infer(std::span<const Meta> in, const Attrs& a) {
  const Shape& s = in[0].shape;
  LT_CHECK(s.rank() > 0, "cannot slice a zero-dim tensor");
  const auto [dim, start, end, step] = decode<SliceAttrs>(a);
  LT_CHECK(dim >= 0 && dim < s.rank(), "dim ", dim, " is out of range for rank ", s.rank());
  LT_CHECK(step > 0, "step must be positive, got ", step);
  LT_CHECK(0 <= start && start <= end && end <= s[static_cast<int>(dim)], "range [", start, ", ", end,
           ") is outside dim ", dim, " of size ", s[static_cast<int>(dim)]);
  Shape out = s;
  out[static_cast<int>(dim)] = (end - start + step - 1) / step;
  return {out, in[0].dtype};
}
inline bool slice_view(std::span<const View> in, const Attrs& a, View& out) {
  const SliceAttrs s = decode<SliceAttrs>(a);
  const auto dim = static_cast<int>(s.dim);
  const std::int64_t start = s.start, end = s.end, step = s.step;
  out = in[0];
  out.data += start * in[0].strides[dim] * static_cast<std::int64_t>(itemsize(in[0].dtype));
  out.shape[dim] = (end - start + step - 1) / step;
  out.strides[dim] = in[0].strides[dim] * step;
  return true;
}

/// The input's shape and dtype, for the copying ops that keep both.
inline Meta same_meta_infer(std::span<const Meta> in, const Attrs&) {
  return {in[0].shape, in[0].dtype};
}

// contiguous. The input itself when already contiguous, else a contiguous copy.
inline bool contiguous_view(std::span<const View> in, const Attrs&, View& out) {
  if (!in[0].contiguous()) return false;
  out = in[0];
  out.wrapped_number = false;
  return true;
}
inline void contiguous_kernel(std::span<const View> in, const View& out, const Attrs&) {
  kernels::copy_strided(in[0], out);
}

// flip. DimsAttrs: the dims to reverse, non-negative. Not an alias: the reversed view has
// negative strides, which only this kernel's copy ever sees.
inline Meta flip_infer(std::span<const Meta> in, const Attrs& a) {
  int rank = in[0].shape.rank();
  std::array<bool, max_rank> seen{};
  for (std::int64_t d : decode<DimsAttrs>(a).dims) {
    LT_CHECK(d >= 0 && d < std::max(rank, 1), "dim ", d, " is out of range for rank ", rank);
    LT_CHECK(!seen[static_cast<std::size_t>(d)], "dim ", d, " appears more than once");
    seen[static_cast<std::size_t>(d)] = true;
  }
  return same_meta_infer(in, a);
}
inline void flip_kernel(std::span<const View> in, const View& out, const Attrs& a) {
  View reversed = in[0];
  auto size = static_cast<std::int64_t>(itemsize(reversed.dtype));
  if (reversed.shape.rank() > 0)
    for (std::int64_t d64 : decode<DimsAttrs>(a).dims) {
      auto d = static_cast<int>(d64);
      reversed.data += (reversed.shape[d] - 1) * reversed.strides[d] * size;
      reversed.strides[d] = -reversed.strides[d];
    }
  kernels::copy_strided(reversed, out);
}

// cat. DimAttrs, non-negative. Inputs of shape [0] are skipped, as PyTorch does for
// legacy empty tensors; the result has the promoted dtype of all inputs.
inline Meta cat_infer(std::span<const Meta> in, const Attrs& a) {
  LT_CHECK(!in.empty(), "expected a non-empty list of tensors");
  DType t = in[0].dtype;
  for (std::size_t k = 0; k < in.size(); ++k) {
    LT_CHECK(in[k].shape.rank() > 0, "zero-dim tensor (at position ", k, ") cannot be concatenated");
    t = promote_types(t, in[k].dtype);
  }
  const Meta* first = nullptr;
  for (const Meta& m : in)
    if (!is_legacy_empty(m.shape)) {
      first = &m;
      break;
    }
  if (first == nullptr) return {Shape{0}, t};
  Shape out = first->shape;
  const std::int64_t dim = decode<DimAttrs>(a).dim;
  LT_CHECK(dim >= 0 && dim < out.rank(), "dim ", dim, " is out of range for rank ", out.rank());
  out[static_cast<int>(dim)] = 0;
  for (std::size_t k = 0; k < in.size(); ++k) {
    const Shape& s = in[k].shape;
    if (is_legacy_empty(s)) continue;
    LT_CHECK(s.rank() == out.rank(), "tensors must have the same rank, got ", first->shape, " and ", s,
             " (at position ", k, ")");
    for (int d = 0; d < s.rank(); ++d)
      LT_CHECK(d == dim || s[d] == first->shape[d], "sizes must match except in dim ", dim, ", got ", first->shape,
               " and ", s, " (at position ", k, ")");
    out[static_cast<int>(dim)] += s[static_cast<int>(dim)];
  }
  return {out, t};
}
inline void cat_kernel(std::span<const View> in, const View& out, const Attrs& a) {
  const auto dim = static_cast<int>(decode<DimAttrs>(a).dim);
  std::int64_t at = 0;
  for (const View& v : in) {
    if (is_legacy_empty(v.shape)) continue;
    View window = out;  // where this input lands: the output's memory and strides
    window.data += at * out.strides[dim] * static_cast<std::int64_t>(itemsize(out.dtype));
    window.shape = v.shape;
    kernels::copy_strided(v, window);
    at += v.shape[dim];
  }
}

// pad (constant). PadAttrs.
inline Meta pad_infer(std::span<const Meta> in, const Attrs& a) {
  const Shape& s = in[0].shape;
  AttrWords pads = decode<PadAttrs>(a).pads;
  LT_CHECK(pads.size() % 2 == 0, "padding length must be even, got ", pads.size());
  LT_CHECK(static_cast<int>(pads.size() / 2) <= s.rank(), "padding of ", pads.size() / 2, " dims for rank ", s.rank());
  Shape out = s;
  for (std::size_t k = 0; k < pads.size() / 2; ++k) {
    int d = s.rank() - 1 - static_cast<int>(k);
    out[d] = s[d] + pads[2 * k] + pads[2 * k + 1];
    LT_CHECK(out[d] >= 0, "padding dim ", d, " of size ", s[d], " by (", pads[2 * k], ", ", pads[2 * k + 1],
             ") gives a negative size");
  }
  return {out, in[0].dtype};
}
inline void pad_kernel(std::span<const View> in, const View& out, const Attrs& a) {
  View src = in[0], dst = out;
  const PadAttrs p = decode<PadAttrs>(a);
  bool grows = false;
  std::int64_t size = static_cast<std::int64_t>(itemsize(out.dtype));
  for (std::size_t k = 0; k < p.pads.size() / 2; ++k) {
    int d = src.shape.rank() - 1 - static_cast<int>(k);
    std::int64_t before = p.pads[2 * k], after = p.pads[2 * k + 1];
    grows = grows || before > 0 || after > 0;
    if (before < 0) src.data -= before * src.strides[d] * size;
    src.shape[d] += std::min<std::int64_t>(before, 0) + std::min<std::int64_t>(after, 0);
    if (before > 0) dst.data += before * dst.strides[d] * size;
    if (src.shape[d] <= 0) src.shape[d] = 0;
    dst.shape[d] = src.shape[d];
  }
  if (grows)
    visit_storage(out.dtype, [&]<class T>(Tag<T>) {
      T value = static_cast<T>(p.value);
      T* p = out.ptr<T>();
      kernels::parallel_blocks(out.numel(), kernels::parallel_threshold,
                               [&](std::int64_t b, std::int64_t e) { std::fill(p + b, p + e, value); });
    });
  kernels::copy_strided(src, dst);
}

// tril, triu. attrs.ints: {diagonal}. Work on the last two dims; the rest are a batch.
inline Meta triangle_infer(std::span<const Meta> in, const Attrs& a) {
  LT_CHECK(in[0].shape.rank() >= 2, "expects a tensor of rank at least 2, got rank ", in[0].shape.rank());
  return same_meta_infer(in, a);
}
/// Copies the input, then zeroes (all-zero bytes, in every dtype) each row's other part.
inline void triangle_kernel(const View& in, const View& out, std::int64_t diagonal, bool lower) {
  kernels::copy_strided(in, out);
  int r = out.shape.rank();
  std::int64_t rows = out.shape[r - 2], cols = out.shape[r - 1];
  std::int64_t size = static_cast<std::int64_t>(itemsize(out.dtype));
  kernels::parallel_for_each_block(out.numel() / cols, cols, [&](std::int64_t b, std::int64_t e) {
    for (std::int64_t q = b; q < e; ++q) {
      std::int64_t i = q % rows;
      std::int64_t from = lower ? std::clamp(i + diagonal + 1, std::int64_t{0}, cols) : 0;
      std::int64_t to = lower ? cols : std::clamp(i + diagonal, std::int64_t{0}, cols);
      std::memset(out.data + (q * cols + from) * size, 0, static_cast<std::size_t>((to - from) * size));
    }
  });
}
inline void tril_kernel(std::span<const View> in, const View& out, const Attrs& a) {
  triangle_kernel(in[0], out, decode<TriangleAttrs>(a).diagonal, true);
}
inline void triu_kernel(std::span<const View> in, const View& out, const Attrs& a) {
  triangle_kernel(in[0], out, decode<TriangleAttrs>(a).diagonal, false);
}

LT_DEFINE_OP(reshape, OpDesc{.kind = OpKind::movement,
                             .arity = 1,
                             .infer = &reshape_infer,
                             .kernel = &reshape_kernel,
                             .view = &reshape_view,
                             .grad = &grad::rule::reshape});
LT_DEFINE_OP(permute, OpDesc{.kind = OpKind::movement,
                             .arity = 1,
                             .infer = &permute_infer,
                             .kernel = &copy_view<&permute_view>,
                             .view = &permute_view,
                             .grad = &grad::rule::permute});
LT_DEFINE_OP(expand, OpDesc{.kind = OpKind::movement,
                            .arity = 1,
                            .infer = &expand_infer,
                            .kernel = &copy_view<&expand_view>,
                            .view = &expand_view,
                            .grad = &grad::rule::expand});
LT_DEFINE_OP(slice, OpDesc{.kind = OpKind::movement,
                           .arity = 1,
                           .infer = &slice_infer,
                           .kernel = &copy_view<&slice_view>,
                           .view = &slice_view,
                           .grad = &grad::rule::slice});
LT_DEFINE_OP(cat, OpDesc{.kind = OpKind::movement,
                         .arity = -1,
                         .infer = &cat_infer,
                         .kernel = &cat_kernel,
                         .grad = &grad::rule::cat});
LT_DEFINE_OP(pad, OpDesc{.kind = OpKind::movement,
                         .arity = 1,
                         .infer = &pad_infer,
                         .kernel = &pad_kernel,
                         .grad = &grad::rule::pad});
LT_DEFINE_OP(flip, OpDesc{.kind = OpKind::movement,
                          .arity = 1,
                          .infer = &flip_infer,
                          .kernel = &flip_kernel,
                          .grad = &grad::rule::flip});
LT_DEFINE_OP(tril, OpDesc{.kind = OpKind::movement,
                          .arity = 1,
                          .infer = &triangle_infer,
                          .kernel = &tril_kernel,
                          .grad = &grad::rule::tril});
LT_DEFINE_OP(triu, OpDesc{.kind = OpKind::movement,
                          .arity = 1,
                          .infer = &triangle_infer,
                          .kernel = &triu_kernel,
                          .grad = &grad::rule::triu});
LT_DEFINE_OP(contiguous, OpDesc{.kind = OpKind::movement,
                                .arity = 1,
                                .infer = &same_meta_infer,
                                .kernel = &contiguous_kernel,
                                .view = &contiguous_view,
                                .grad = &grad::rule::contiguous});

}  // namespace lt::movement
