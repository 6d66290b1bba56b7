#pragma once
// Collectives over the replicas of a launch, traced into the step graph like any op: on a lazy
// device they run when the step runs, inside its plan. Every replica must call the same
// collectives in the same order with the same shapes and dtypes; outside lt::launch the world
// is one replica. Reductions combine the replicas' values in one fixed tree over the ordinals, so
// every replica gets the same bits.
#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "lazytensor/distributed/launch.hpp"
#include "lazytensor/ops/declarations.hpp"
#include "lazytensor/trace/dispatch.hpp"
#include "lazytensor/trace/functions/elementwise.hpp"
#include "lazytensor/trace/functions/movement.hpp"

namespace lt {

namespace detail {
inline Tensor scaled(const Tensor& t, ReduceOp op, double scale, const char* name) {
  if (op == ReduceOp::mean) scale /= world_size();
  if (scale == 1.0) return t;
  LT_CHECK(is_floating(t.dtype()), name, ": a ", reduce_op_name(op), " scaled by ", scale, " needs floating-point values, got ",
           t.dtype());
  return t * scale;
}
/// A mean is traced as a sum and a scale.
inline ReduceOp traced_op(ReduceOp op) { return op == ReduceOp::mean ? ReduceOp::sum : op; }
}  // namespace detail

/// The reduction over every replica of `t`, times `scale` (a mean divides by world_size()).
inline Tensor all_reduce(ReduceOp op, const Tensor& t, double scale = 1.0, Site site = Site::current()) {
  RecordingSite at(site);
  Tensor reduced = record(collective::all_reduce, {t}, encode(AllReduceAttrs{detail::traced_op(op)}));
  return detail::scaled(reduced, op, scale, "all_reduce");
}

/// Bytes of tensors packed into one exchange: small tensors reduced together cost one
/// collective, not one each.
inline constexpr std::int64_t all_reduce_bucket_bytes = std::int64_t{32} << 20;

/// Reduces every tensor of `tensors` in place (each handle then holds the reduced value).
/// Tensors of one dtype and device are packed into buckets of up to all_reduce_bucket_bytes,
/// each reduced as one flat tensor.
inline void all_reduce(ReduceOp op, std::vector<Tensor>& tensors, double scale = 1.0, Site site = Site::current()) {
  RecordingSite at(site);
  std::map<std::pair<DType, std::string>, std::vector<std::size_t>> groups;  // in first-use order per key
  for (std::size_t k = 0; k < tensors.size(); ++k) {
    LT_CHECK(tensors[k].defined(), "all_reduce: tensor ", k, " is undefined");
    groups[{tensors[k].dtype(), tensors[k].device().str()}].push_back(k);
  }
  for (auto& [key, members] : groups) {
    std::size_t first = 0;
    while (first < members.size()) {
      std::size_t last = first;
      std::int64_t bytes = 0;
      std::vector<Tensor> flat;
      while (last < members.size()) {
        const Tensor& t = tensors[members[last]];
        const auto size = t.numel() * static_cast<std::int64_t>(itemsize(t.dtype()));
        if (!flat.empty() && bytes + size > all_reduce_bucket_bytes) break;
        bytes += size;
        flat.push_back(t.reshape({-1}));
        ++last;
      }
      Tensor reduced = all_reduce(op, flat.size() == 1 ? flat[0] : cat(flat), scale);
      std::int64_t at = 0;
      for (std::size_t m = first; m < last; ++m) {
        Tensor& t = tensors[members[m]];
        const std::int64_t n = t.numel();
        t = reduced.slice(0, at, at + n).reshape(t.shape());
        at += n;
      }
      first = last;
    }
  }
}

/// Every replica's `t`, concatenated along `dim` in ordinal order.
inline Tensor all_gather(const Tensor& t, std::int64_t dim = 0, Site site = Site::current()) {
  RecordingSite at(site);
  const int d = t.defined() && t.dim() > 0 ? static_cast<int>(dim < 0 ? dim + t.dim() : dim) : static_cast<int>(dim);
  return record(collective::all_gather, {t}, encode(AllGatherAttrs{d}));
}

/// This replica's shard, along `dim`, of the reduction over every replica of `t`, times
/// `scale`; the extent of `dim` must split into world_size() equal shards.
inline Tensor reduce_scatter(ReduceOp op, const Tensor& t, std::int64_t dim = 0, double scale = 1.0,
                             Site site = Site::current()) {
  RecordingSite at(site);
  const int d = t.defined() && t.dim() > 0 ? static_cast<int>(dim < 0 ? dim + t.dim() : dim) : static_cast<int>(dim);
  Tensor shard = record(collective::reduce_scatter, {t}, encode(ReduceScatterAttrs{detail::traced_op(op), d}));
  return detail::scaled(shard, op, scale, "reduce_scatter");
}

/// Replica `root`'s `t`, on every replica.
inline Tensor broadcast(const Tensor& t, int root = 0, Site site = Site::current()) {
  RecordingSite at(site);
  return record(collective::broadcast, {t}, encode(BroadcastAttrs{root}));
}

}  // namespace lt
