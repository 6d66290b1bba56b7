#pragma once
// Reading strided, broadcast and mixed-dtype operands in contiguous chunks of a compute type.
#include <algorithm>
#include <array>
#include <cstdint>
#include <span>

#include "lazytensor/core/array.hpp"
#include "lazytensor/ops/kernels/parallel.hpp"

namespace lt::kernels {

/// Walks the elements [begin, end) of a row-major index space `shape`, keeping the element
/// offset of one strided operand up to date.
class OffsetWalker {
 public:
  OffsetWalker(const Shape& shape, const Strides& strides, std::int64_t begin)
      : shape_(shape), strides_(strides), idx_(Dims::filled(shape.rank(), 0)) {
    std::int64_t rest = begin;
    for (int d = shape.rank() - 1; d >= 0; --d) {
      std::int64_t e = shape[d] > 0 ? shape[d] : 1;
      idx_[d] = rest % e;
      rest /= e;
      offset_ += idx_[d] * strides[d];
    }
  }
  std::int64_t offset() const { return offset_; }
  void next() {
    for (int d = shape_.rank() - 1; d >= 0; --d) {
      offset_ += strides_[d];
      if (++idx_[d] < shape_[d]) return;
      offset_ -= idx_[d] * strides_[d];
      idx_[d] = 0;
    }
  }

 private:
  const Shape& shape_;
  const Strides& strides_;
  Dims idx_;
  std::int64_t offset_ = 0;
};

/// The offset of element i (in row-major order of `out`) in an operand of strides `strides`
/// over `out`, found by a division per dim the operand moves along and none per broadcast
/// dim: for lookups here and there, where setting up a walker would cost more than the walk.
class ElementOffset {
 public:
  ElementOffset() = default;
  ElementOffset(const Shape& out, const Strides& strides) {
    std::int64_t pitch = 1;
    for (int d = out.rank() - 1; d >= 0; --d) {
      if (strides[d] != 0 && out[d] > 1) dims_[static_cast<std::size_t>(moving_++)] = {pitch, out[d], strides[d]};
      pitch *= out[d];
    }
  }
  std::int64_t operator()(std::int64_t i) const {
    std::int64_t offset = 0;
    for (int k = 0; k < moving_; ++k) {
      const Dim& d = dims_[static_cast<std::size_t>(k)];
      offset += i / d.pitch % d.extent * d.stride;
    }
    return offset;
  }

 private:
  struct Dim {
    std::int64_t pitch, extent, stride;  // pitch: elements of `out` per step along the dim
  };
  std::array<Dim, max_rank> dims_{};
  int moving_ = 0;
};

/// `shape` and `strides` with neighbouring dims merged wherever one walk covers both (a dim
/// whose stride is the next dim's stride times its extent) and dims of extent 1 dropped: the
/// same elements in the same order, in as few and as long rows as the layout allows. A
/// channel's value broadcast over [N, C, H, W] then reads as rows of H * W, not of W.
struct MergedDims {
  Shape shape;
  Strides strides;
  MergedDims(const Shape& s, const Strides& st, bool merge = true) {
    if (!merge) {
      shape = s;
      strides = st;
      return;
    }
    for (int d = 0; d < s.rank(); ++d) {
      if (s[d] == 1) continue;
      if (!shape.empty() && strides.back() == st[d] * s[d]) {
        shape[shape.rank() - 1] *= s[d];
        strides[strides.rank() - 1] = st[d];
      } else {
        shape.push_back(s[d]);
        strides.push_back(st[d]);
      }
    }
    if (shape.empty() && s.rank() > 0) {  // every extent 1: one row of one element
      shape.push_back(1);
      strides.push_back(0);
    }
  }
};

/// The runs of a strided index space along its innermost dim (after merging dims that walk as
/// one, unless `merge` is false), from element `begin` on: where each starts (offset) and how
/// many elements it has left (the first may start mid-row). Walkers of two layouts moved in
/// step must not merge: their rows would differ.
class InnerRuns {
 public:
  InnerRuns(const Shape& shape, const Strides& strides, std::int64_t begin, bool merge = true)
      : merged_(shape, strides, merge),
        stride(merged_.shape.rank() > 0 ? merged_.strides.back() : 0),
        inner_(merged_.shape.rank() > 0 ? std::max<std::int64_t>(merged_.shape.back(), 1) : 1),
        outer_(std::span<const std::int64_t>(merged_.shape.begin(), merged_.shape.rank() > 0 ? merged_.shape.end() - 1 : merged_.shape.end())),
        outer_strides_(std::span<const std::int64_t>(merged_.strides.begin(),
                                                     merged_.shape.rank() > 0 ? merged_.strides.end() - 1 : merged_.strides.end())),
        walker_(outer_, outer_strides_, begin / inner_),
        at_(begin % inner_) {}
  InnerRuns(const InnerRuns&) = delete;  // the walker refers to this object's dims

  std::int64_t offset() const { return walker_.offset() + at_ * stride; }
  std::int64_t left() const { return inner_ - at_; }
  void next() {
    at_ = 0;
    walker_.next();
  }

 private:
  MergedDims merged_;

 public:
  const std::int64_t stride;  // between neighbours along the innermost dim

 private:
  std::int64_t inner_;
  Shape outer_;
  Strides outer_strides_;
  OffsetWalker walker_;
  std::int64_t at_;
};

/// An input as seen from an output of shape `out`: broadcast strides, dtype, fast-path flag.
struct Operand {
  const std::byte* data;
  DType dtype;
  Strides strides;
  bool dense;  // same element order as the output: read as a plain array

  Operand(const View& v, const Shape& out)
      : data(v.data), dtype(v.dtype), strides(broadcast_strides(v.shape, v.strides, out)),
        dense(v.shape == out && v.contiguous()) {}
};

/// Element i of `op` (in the output's index order) as Tc, its offset found by `at`.
template <class Tc>
Tc load_one(const Operand& op, const ElementOffset& at, std::int64_t i) {
  return visit_storage(op.dtype, [&]<class T>(Tag<T>) { return static_cast<Tc>(reinterpret_cast<const T*>(op.data)[at(i)]); });
}

/// Copies elements [begin, end) of `op` (in the output's index order) into dst as Tc.
template <class Tc>
void load_chunk(const Operand& op, const Shape& out, std::int64_t begin, std::int64_t end, Tc* dst) {
  visit_storage(op.dtype, [&]<class T>(Tag<T>) {
    const T* src = reinterpret_cast<const T*>(op.data);
    std::int64_t n = end - begin;
    if (op.dense) {
      for (std::int64_t i = 0; i < n; ++i) dst[i] = static_cast<Tc>(src[begin + i]);
      return;
    }
    if (out.rank() == 0) {
      if (n > 0) dst[0] = static_cast<Tc>(src[0]);
      return;
    }
    // Row by row along the innermost dim: a broadcast row is one value, a plain row a copy.
    // The outer dims are walked once per row (a walker's set-up divides once per dim).
    InnerRuns rows(out, op.strides, begin);
    const std::int64_t stride = rows.stride;
    for (std::int64_t i = begin; i < end; rows.next()) {
      std::int64_t run = std::min(end - i, rows.left());
      const T* row = src + rows.offset();
      Tc* d = dst + (i - begin);
      if (stride == 0) std::fill_n(d, run, static_cast<Tc>(*row));
      else if (stride == 1) for (std::int64_t j = 0; j < run; ++j) d[j] = static_cast<Tc>(row[j]);
      else for (std::int64_t j = 0; j < run; ++j) d[j] = static_cast<Tc>(row[j * stride]);
      i += run;
    }
  });
}

/// Copies any view into a contiguous destination of dtype `dst.dtype` (same shape).
inline void copy_into(const View& src, const View& dst) {
  Operand op(src, dst.shape);
  visit_storage(dst.dtype, [&]<class T>(Tag<T>) {
    T* d = dst.ptr<T>();
    parallel_blocks(dst.numel(), parallel_threshold,
                    [&](std::int64_t b, std::int64_t e) { load_chunk<T>(op, dst.shape, b, e, d + b); });
  });
}

}  // namespace lt::kernels
