#pragma once
// Matrix products: matmul (torch.matmul's rank rules, broadcast batch dims), mm, bmm, mv.
#include "lazytensor/core/replica.hpp"
#include "lazytensor/ops/declarations.hpp"
#include "lazytensor/trace/dispatch.hpp"

namespace lt {

namespace detail {
/// matmul as per-term products summed by a fixed tree over the contracted dim, for the replicas
/// of a reproducible launch (core/replica.hpp); defined in the implementation.
Tensor tree_matmul(const Tensor& a, const Tensor& b);
}  // namespace detail

inline Tensor matmul(const Tensor& a, const Tensor& b, Site site = Site::current()) {
  RecordingSite at(site);
  if (detail::reproducible_sums && a.defined() && b.defined() && a.dim() >= 2 && b.dim() >= 2) return detail::tree_matmul(a, b);
  return record(contraction::matmul, {a, b});
}

namespace detail {
inline void check_ranks(std::string_view op, const Tensor& a, const Tensor& b, int ra, int rb) {
  Tensor operands[] = {a, b};
  if (!a.defined() || !b.defined()) op_error(op, operands, "an operand is undefined");
  if (a.dim() != ra || b.dim() != rb)
    op_error(op, operands, concat("expects operands of rank ", ra, " and ", rb, ", got ", a.dim(), " and ", b.dim()));
}
}  // namespace detail

/// [n, k] x [k, m].
inline Tensor mm(const Tensor& a, const Tensor& b, Site site = Site::current()) {
  RecordingSite at(site);
  detail::check_ranks("mm", a, b, 2, 2);
  return matmul(a, b);
}

/// [B, n, k] x [B, k, m], batch sizes equal.
inline Tensor bmm(const Tensor& a, const Tensor& b, Site site = Site::current()) {
  RecordingSite at(site);
  detail::check_ranks("bmm", a, b, 3, 3);
  if (a.size(0) != b.size(0)) {
    Tensor operands[] = {a, b};
    op_error("bmm", operands, "batch sizes differ");
  }
  return matmul(a, b);
}

/// [n, k] x [k].
inline Tensor mv(const Tensor& a, const Tensor& v, Site site = Site::current()) {
  RecordingSite at(site);
  detail::check_ranks("mv", a, v, 2, 1);
  return matmul(a, v);
}

inline Tensor Tensor::matmul(const Tensor& o, Site site) const { return lt::matmul(*this, o, site); }
inline Tensor Tensor::mm(const Tensor& o, Site site) const { return lt::mm(*this, o, site); }
inline Tensor Tensor::bmm(const Tensor& o, Site site) const { return lt::bmm(*this, o, site); }
inline Tensor Tensor::mv(const Tensor& v, Site site) const { return lt::mv(*this, v, site); }

}  // namespace lt
