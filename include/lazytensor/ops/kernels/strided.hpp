#pragma once
// Reading strided, broadcast and mixed-dtype operands in contiguous chunks of a compute type.
#include <algorithm>
#include <cstdint>

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

/// Copies elements [begin, end) of `op` (in the output's index order) into dst as Tc.
template <class Tc>
void load_chunk(const Operand& op, const Shape& out, std::int64_t begin, std::int64_t end, Tc* dst) {
  visit(op.dtype, [&]<class T>(Tag<T>) {
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
    const std::int64_t inner = out[out.rank() - 1], stride = op.strides[out.rank() - 1];
    for (std::int64_t i = begin; i < end;) {
      std::int64_t run = std::min(end - i, inner - i % inner);
      const T* row = src + OffsetWalker(out, op.strides, i).offset();
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
  visit(dst.dtype, [&]<class T>(Tag<T>) {
    T* d = dst.ptr<T>();
    parallel_blocks(dst.numel(), parallel_threshold,
                    [&](std::int64_t b, std::int64_t e) { load_chunk<T>(op, dst.shape, b, e, d + b); });
  });
}

}  // namespace lt::kernels
