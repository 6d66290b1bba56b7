#pragma once
// max and min with LibTorch's overloads: over every element, along one dim with the indices
// of the extremes, and elementwise between two tensors.
#include <cstdint>
#include <string_view>
#include <tuple>

#include "lazytensor/trace/functions/creation.hpp"
#include "lazytensor/trace/functions/elementwise.hpp"
#include "lazytensor/trace/functions/movement.hpp"
#include "lazytensor/trace/functions/reduction.hpp"

namespace lt {

namespace detail {
/// The extremes of `x` along `dim` and their indices. The values are gathered at the
/// indices, so that the gradient reaches the one element chosen in each row, as
/// torch.max(dim)'s does (amax's is shared among ties).
inline std::tuple<Tensor, Tensor> extremes_along(std::string_view op, bool largest, const Tensor& x, std::int64_t dim,
                                                 bool keepdim) {
  reduction_attrs(op, x, Dims{dim}, keepdim);  // a bad dim fails here, named after op
  if (x.dim() == 0) return {x.reshape(Shape{}), zeros({}, x.device(), i64)};
  const int d = wrap_dim(dim, x.dim());
  if (x.size(d) == 0)
    op_error(op, std::span(&x, 1), concat("dim ", dim, " has extent 0: an empty row has no ", largest ? "max" : "min"));
  // The arg reductions take no bool: as i32, false < true orders the same way.
  const Tensor keys = x.dtype() == boolean ? x.to(i32) : x;
  Tensor indices = largest ? argmax(keys, d, true) : argmin(keys, d, true);
  Tensor values = x.gather(d, indices);
  if (!keepdim) return {values.squeeze(d), indices.squeeze(d)};
  return {values, indices};
}
}  // namespace detail

/// The largest element of `x` (NaN if any is NaN), as torch::max(x) and amax(x).
inline Tensor max(const Tensor& x, Site site = Site::current()) { return amax(x, site); }
/// The smallest element of `x` (NaN if any is NaN), as torch::min(x) and amin(x).
inline Tensor min(const Tensor& x, Site site = Site::current()) { return amin(x, site); }

/// (values, indices) of the largest elements along `dim`, as torch::max(x, dim, keepdim):
/// indices are i64, a tie gives the first index, and NaN counts as the largest. The gradient
/// reaches the chosen element of each row. `auto [values, indices] = lt::max(x, 1);`
inline std::tuple<Tensor, Tensor> max(const Tensor& x, std::int64_t dim, bool keepdim = false,
                                      Site site = Site::current()) {
  RecordingSite at(site);
  return detail::extremes_along("max", true, x, dim, keepdim);
}
/// (values, indices) of the smallest elements along `dim`, as torch::min(x, dim, keepdim).
inline std::tuple<Tensor, Tensor> min(const Tensor& x, std::int64_t dim, bool keepdim = false,
                                      Site site = Site::current()) {
  RecordingSite at(site);
  return detail::extremes_along("min", false, x, dim, keepdim);
}

/// The elementwise maximum, as torch::max(a, b) and maximum(a, b).
inline Tensor max(const Tensor& a, const Tensor& b, Site site = Site::current()) { return maximum(a, b, site); }
/// The elementwise minimum, as torch::min(a, b) and minimum(a, b).
inline Tensor min(const Tensor& a, const Tensor& b, Site site = Site::current()) { return minimum(a, b, site); }

inline Tensor Tensor::max(Site site) const { return lt::max(*this, site); }
inline std::tuple<Tensor, Tensor> Tensor::max(std::int64_t dim, bool keepdim, Site site) const {
  return lt::max(*this, dim, keepdim, site);
}
inline Tensor Tensor::max(const Tensor& other, Site site) const { return lt::max(*this, other, site); }
inline Tensor Tensor::min(Site site) const { return lt::min(*this, site); }
inline std::tuple<Tensor, Tensor> Tensor::min(std::int64_t dim, bool keepdim, Site site) const {
  return lt::min(*this, dim, keepdim, site);
}
inline Tensor Tensor::min(const Tensor& other, Site site) const { return lt::min(*this, other, site); }

}  // namespace lt
