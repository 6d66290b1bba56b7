#pragma once
// Reduction functions. Dims may be negative; no dims (or an empty list) reduces every dim,
// as PyTorch's `x.sum()`. keepdim keeps each reduced dim with extent 1.
#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lazytensor/ops/declarations.hpp"
#include "lazytensor/ops/op_attrs.hpp"
#include "lazytensor/trace/dispatch.hpp"

namespace lt {

namespace detail {
/// The attrs of a reduction (ReductionAttrs) with the dims wrapped and sorted. A repeated
/// or out-of-range dim fails naming the op. Rank-0 tensors take dim 0 or -1 and reduce
/// their one element, so their list of dims is empty.
inline Attrs reduction_attrs(std::string_view op, const Tensor& x, const Dims& dims, bool keepdim,
                             std::optional<double> correction = std::nullopt) {
  std::span<const Tensor> operands(&x, 1);
  if (!x.defined()) op_error(op, operands, "an operand is undefined");
  std::array<bool, max_rank> seen{};
  for (std::int64_t d : dims) {
    int w = 0;
    try {
      w = wrap_dim(d, x.dim());
    } catch (const Error& e) {
      op_error(op, operands, e.what());
    }
    if (seen[static_cast<std::size_t>(w)])
      op_error(op, operands, "dim " + std::to_string(d) + " appears more than once in dims " + dims.str());
    seen[static_cast<std::size_t>(w)] = true;
  }
  Dims sorted;
  for (int d = 0; d < x.dim(); ++d)
    if (seen[static_cast<std::size_t>(d)]) sorted.push_back(d);
  return encode(ReductionAttrs{keepdim, sorted.span(), correction});
}
}  // namespace detail

#define LT_REDUCTION_FUNCTION(op, desc)                                                            \
  inline Tensor op(const Tensor& x, Dims dims, bool keepdim = false, Site site = Site::current()) { \
    RecordingSite at(site);                                                                        \
    return record(reduction::desc, {x}, detail::reduction_attrs(#op, x, dims, keepdim));           \
  }                                                                                                \
  inline Tensor op(const Tensor& x, std::int64_t dim, bool keepdim = false,                        \
                   Site site = Site::current()) {                                                  \
    return op(x, Dims{dim}, keepdim, site);                                                        \
  }                                                                                                \
  inline Tensor op(const Tensor& x, Site site = Site::current()) { return op(x, Dims{}, false, site); }
LT_REDUCTION_FUNCTION(sum, sum)
LT_REDUCTION_FUNCTION(mean, mean)
LT_REDUCTION_FUNCTION(prod, prod)
LT_REDUCTION_FUNCTION(amax, amax)
LT_REDUCTION_FUNCTION(amin, amin)
LT_REDUCTION_FUNCTION(logsumexp, logsumexp)
LT_REDUCTION_FUNCTION(all, all_true)
LT_REDUCTION_FUNCTION(any, any_true)
#undef LT_REDUCTION_FUNCTION

/// Index of the first largest element along `dim`; with no dim, in the flattened tensor.
/// NaN counts as the largest.
inline Tensor argmax(const Tensor& x, std::optional<std::int64_t> dim, bool keepdim = false,
                     Site site = Site::current()) {
  RecordingSite at(site);
  return record(reduction::argmax, {x}, detail::reduction_attrs("argmax", x, dim ? Dims{*dim} : Dims{}, keepdim));
}
inline Tensor argmax(const Tensor& x, Site site = Site::current()) { return argmax(x, std::nullopt, false, site); }
/// As argmax, for the smallest element.
inline Tensor argmin(const Tensor& x, std::optional<std::int64_t> dim, bool keepdim = false,
                     Site site = Site::current()) {
  RecordingSite at(site);
  return record(reduction::argmin, {x}, detail::reduction_attrs("argmin", x, dim ? Dims{*dim} : Dims{}, keepdim));
}
inline Tensor argmin(const Tensor& x, Site site = Site::current()) { return argmin(x, std::nullopt, false, site); }

/// Variance with N - correction degrees of freedom (1: the unbiased estimate).
inline Tensor var(const Tensor& x, Dims dims, std::int64_t correction = 1, bool keepdim = false,
                  Site site = Site::current()) {
  RecordingSite at(site);
  return record(reduction::var, {x},
                detail::reduction_attrs("var", x, dims, keepdim, static_cast<double>(correction)));
}
inline Tensor var(const Tensor& x, std::int64_t correction = 1, Site site = Site::current()) {
  return var(x, Dims{}, correction, false, site);
}
/// Standard deviation: the square root of var.
inline Tensor std(const Tensor& x, Dims dims, std::int64_t correction = 1, bool keepdim = false,
                  Site site = Site::current()) {
  RecordingSite at(site);
  return record(reduction::std_dev, {x},
                detail::reduction_attrs("std", x, dims, keepdim, static_cast<double>(correction)));
}
inline Tensor std(const Tensor& x, std::int64_t correction = 1, Site site = Site::current()) {
  return lt::std(x, Dims{}, correction, false, site);
}

inline Tensor Tensor::sum(Site site) const { return lt::sum(*this, site); }
inline Tensor Tensor::sum(Dims dims, bool keepdim, Site site) const { return lt::sum(*this, dims, keepdim, site); }
inline Tensor Tensor::sum(std::int64_t dim, bool keepdim, Site site) const {
  return lt::sum(*this, dim, keepdim, site);
}
inline Tensor Tensor::mean(Site site) const { return lt::mean(*this, site); }
inline Tensor Tensor::mean(Dims dims, bool keepdim, Site site) const { return lt::mean(*this, dims, keepdim, site); }
inline Tensor Tensor::mean(std::int64_t dim, bool keepdim, Site site) const {
  return lt::mean(*this, dim, keepdim, site);
}
inline Tensor Tensor::prod(Site site) const { return lt::prod(*this, site); }
inline Tensor Tensor::prod(Dims dims, bool keepdim, Site site) const { return lt::prod(*this, dims, keepdim, site); }
inline Tensor Tensor::prod(std::int64_t dim, bool keepdim, Site site) const {
  return lt::prod(*this, dim, keepdim, site);
}
inline Tensor Tensor::amax(Site site) const { return lt::amax(*this, site); }
inline Tensor Tensor::amax(Dims dims, bool keepdim, Site site) const { return lt::amax(*this, dims, keepdim, site); }
inline Tensor Tensor::amax(std::int64_t dim, bool keepdim, Site site) const {
  return lt::amax(*this, dim, keepdim, site);
}
inline Tensor Tensor::amin(Site site) const { return lt::amin(*this, site); }
inline Tensor Tensor::amin(Dims dims, bool keepdim, Site site) const { return lt::amin(*this, dims, keepdim, site); }
inline Tensor Tensor::amin(std::int64_t dim, bool keepdim, Site site) const {
  return lt::amin(*this, dim, keepdim, site);
}
inline Tensor Tensor::argmax(Site site) const { return lt::argmax(*this, site); }
inline Tensor Tensor::argmax(std::int64_t dim, bool keepdim, Site site) const {
  return lt::argmax(*this, dim, keepdim, site);
}
inline Tensor Tensor::argmin(Site site) const { return lt::argmin(*this, site); }
inline Tensor Tensor::argmin(std::int64_t dim, bool keepdim, Site site) const {
  return lt::argmin(*this, dim, keepdim, site);
}
inline Tensor Tensor::var(std::int64_t correction, Site site) const { return lt::var(*this, correction, site); }
inline Tensor Tensor::var(Dims dims, std::int64_t correction, bool keepdim, Site site) const {
  return lt::var(*this, dims, correction, keepdim, site);
}
inline Tensor Tensor::std(std::int64_t correction, Site site) const { return lt::std(*this, correction, site); }
inline Tensor Tensor::std(Dims dims, std::int64_t correction, bool keepdim, Site site) const {
  return lt::std(*this, dims, correction, keepdim, site);
}
inline Tensor Tensor::logsumexp(Dims dims, bool keepdim, Site site) const {
  return lt::logsumexp(*this, dims, keepdim, site);
}
inline Tensor Tensor::all(Site site) const { return lt::all(*this, site); }
inline Tensor Tensor::all(Dims dims, bool keepdim, Site site) const { return lt::all(*this, dims, keepdim, site); }
inline Tensor Tensor::any(Site site) const { return lt::any(*this, site); }
inline Tensor Tensor::any(Dims dims, bool keepdim, Site site) const { return lt::any(*this, dims, keepdim, site); }

}  // namespace lt
