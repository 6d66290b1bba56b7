#pragma once
// Movement functions: views, concatenation, padding and indexing.
#include <optional>
#include <vector>

#include "lazytensor/ops/movement.hpp"
#include "lazytensor/trace/dispatch.hpp"

namespace lt {

namespace detail {
inline Attrs dims_attrs(const Dims& d) { return Attrs{d.vec(), {}}; }
}  // namespace detail

/// `shape` may hold one -1, inferred from the number of elements.
inline Tensor reshape(const Tensor& x, Shape shape) {
  int infer_at = -1;
  std::int64_t known = 1;
  for (int k = 0; k < shape.rank(); ++k) {
    if (shape[k] == -1) {
      if (infer_at >= 0) op_error("reshape", {&x, 1}, "only one extent may be -1, got " + shape.str());
      infer_at = k;
    } else {
      known *= shape[k];
    }
  }
  if (infer_at >= 0) {
    if (known == 0 || x.numel() % known != 0)
      op_error("reshape", {&x, 1}, "cannot infer the -1 extent of " + shape.str());
    shape[infer_at] = x.numel() / known;
  }
  return record(movement::reshape, {x}, detail::dims_attrs(shape));
}

/// As reshape: on a lazy device every value can be viewed.
inline Tensor view(const Tensor& x, Shape shape) { return reshape(x, shape); }

inline Tensor permute(const Tensor& x, Dims dims) {
  for (auto& d : dims) {
    if (d < -x.dim() || d >= std::max(x.dim(), 1)) op_error("permute", {&x, 1}, "dim " + std::to_string(d) + " is out of range");
    d = d < 0 ? d + x.dim() : d;
  }
  return record(movement::permute, {x}, detail::dims_attrs(dims));
}

inline Tensor transpose(const Tensor& x, std::int64_t dim0, std::int64_t dim1) {
  if (x.dim() == 0) return x;
  Dims perm = Dims::filled(x.dim(), 0);
  std::iota(perm.begin(), perm.end(), 0);
  try {
    std::swap(perm[wrap_dim(dim0, x.dim())], perm[wrap_dim(dim1, x.dim())]);
  } catch (const Error& e) {
    op_error("transpose", {&x, 1}, e.what());
  }
  return record(movement::permute, {x}, detail::dims_attrs(perm));
}

/// `shape` may use -1 to keep an extent; new leading dims are added as in broadcasting.
inline Tensor expand(const Tensor& x, Shape shape) {
  int lead = shape.rank() - x.dim();
  for (int k = 0; k < shape.rank(); ++k)
    if (shape[k] == -1) {
      if (k < lead) op_error("expand", {&x, 1}, "-1 is not allowed for the new leading dim " + std::to_string(k));
      shape[k] = x.shape()[k - lead];
    }
  return record(movement::expand, {x}, detail::dims_attrs(shape));
}

/// Elements start, start+step, ... below end of `dim`. Negative start and end count from the
/// end; both are clamped to the dim, as in Python slicing.
inline Tensor slice(const Tensor& x, std::int64_t dim, std::optional<std::int64_t> start,
                    std::optional<std::int64_t> end, std::int64_t step = 1) {
  if (x.dim() == 0) op_error("slice", {&x, 1}, "cannot slice a zero-dim tensor");
  int d;
  try {
    d = wrap_dim(dim, x.dim());
  } catch (const Error& e) {
    op_error("slice", {&x, 1}, e.what());
  }
  if (step <= 0) op_error("slice", {&x, 1}, "step must be positive, got " + std::to_string(step));
  std::int64_t n = x.shape()[d];
  auto clamp_index = [n](std::int64_t i) { return std::clamp(i < 0 ? i + n : i, std::int64_t{0}, n); };
  std::int64_t s = clamp_index(start.value_or(0)), e = clamp_index(end.value_or(n));
  return record(movement::slice, {x}, Attrs{{d, s, std::max(s, e), step}, {}});
}

inline Tensor Tensor::reshape(Shape shape) const { return lt::reshape(*this, shape); }
inline Tensor Tensor::view(Shape shape) const { return lt::view(*this, shape); }
inline Tensor Tensor::permute(Dims dims) const { return lt::permute(*this, dims); }
inline Tensor Tensor::transpose(std::int64_t d0, std::int64_t d1) const { return lt::transpose(*this, d0, d1); }
inline Tensor Tensor::t() const {
  if (dim() > 2) op_error("t", {this, 1}, "expects a tensor of rank at most 2");
  return lt::transpose(*this, 0, -1);
}
inline Tensor Tensor::expand(Shape shape) const { return lt::expand(*this, shape); }
inline Tensor Tensor::slice(std::int64_t dim, std::optional<std::int64_t> start, std::optional<std::int64_t> end,
                            std::int64_t step) const {
  return lt::slice(*this, dim, start, end, step);
}

}  // namespace lt
