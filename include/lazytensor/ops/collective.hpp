#pragma once
// Collectives as ops: traced into a step graph like any op and run by the plan, each a step of
// its own. The kernel hands its input and output to the replica group of the device the step
// runs for (core/replica.hpp); the plan does not know which transport the group uses, so every
// replica of a process runs the same plan. Outside lt::launch the world is one replica and a
// collective copies its input.
#include <cstdint>
#include <span>

#include "lazytensor/core/replica.hpp"
#include "lazytensor/ops/declarations.hpp"
#include "lazytensor/ops/declare.hpp"
#include "lazytensor/ops/descriptor.hpp"
#include "lazytensor/ops/grad.hpp"
#include "lazytensor/ops/kernels/copy.hpp"
#include "lazytensor/ops/op_attrs.hpp"

namespace lt::collective {


inline void check_reducible(const Meta& m) {
  LT_CHECK(m.dtype == DType::f32 || m.dtype == DType::f64 || m.dtype == DType::i32 || m.dtype == DType::i64,
           "reduces f32, f64, i32 and i64 values, not ", m.dtype);
}
inline void check_transferable(const Meta& m) {
  LT_CHECK(!is_low_precision(m.dtype), name(m.dtype), " values are not supported yet");
}
inline void check_dim(const Meta& m, std::int64_t dim) {
  LT_CHECK(m.shape.rank() > 0, "needs a tensor of rank 1 or more, got a scalar");
  LT_CHECK(dim >= 0 && dim < m.shape.rank(), "dim ", dim, " is out of range for rank ", m.shape.rank());
}

inline Meta all_reduce_infer(std::span<const Meta> in, const Attrs& a) {
  check_reducible(in[0]);
  LT_CHECK(decode<AllReduceAttrs>(a).op != ReduceOp::mean, "a mean is a sum and a scale");
  return {in[0].shape, in[0].dtype};
}

inline Meta all_gather_infer(std::span<const Meta> in, const Attrs& a) {
  check_transferable(in[0]);
  const std::int64_t dim = decode<AllGatherAttrs>(a).dim;
  check_dim(in[0], dim);
  Meta out{in[0].shape, in[0].dtype};
  out.shape[static_cast<int>(dim)] *= world_size();
  return out;
}

inline Meta reduce_scatter_infer(std::span<const Meta> in, const Attrs& a) {
  check_reducible(in[0]);
  const ReduceScatterAttrs r = decode<ReduceScatterAttrs>(a);
  LT_CHECK(r.op != ReduceOp::mean, "a mean is a sum and a scale");
  check_dim(in[0], r.dim);
  const int dim = static_cast<int>(r.dim), world = world_size();
  LT_CHECK(in[0].shape[dim] % world == 0, "dim ", dim, " of extent ", in[0].shape[dim],
           " does not split into ", world, " equal shards");
  Meta out{in[0].shape, in[0].dtype};
  out.shape[dim] /= world;
  return out;
}

inline Meta broadcast_infer(std::span<const Meta> in, const Attrs& a) {
  check_transferable(in[0]);
  const std::int64_t root = decode<BroadcastAttrs>(a).root;
  LT_CHECK(root >= 0 && root < world_size(), "root ", root, " is not an ordinal of a world of ", world_size());
  return {in[0].shape, in[0].dtype};
}

/// Runs `call` through the group of the replica whose step this is.
inline void run(detail::CollectiveCall call, const View& in) {
  Array staged;  // the group reads inputs as contiguous memory
  if (!in.contiguous()) {
    staged = Array::empty(in.dtype, in.shape);
    kernels::copy_into(in, staged.view);
  }
  call.in = staged.defined() ? staged.view : in;
  const detail::ReplicaSlot& slot = detail::replica_slot();
  if (slot.group != nullptr) return slot.group->collective(slot.local_ordinal, call);
  LT_CHECK(call.out.numel() == call.in.numel(), detail::collective_name(call.kind), ": the replica world changed while the step was queued");
  if (call.out.numel() > 0) kernels::copy_into(call.in, call.out);  // a world of one
}

inline void all_reduce_kernel(std::span<const View> in, const View& out, const Attrs& a) {
  run({detail::CollectiveKind::all_reduce, decode<AllReduceAttrs>(a).op, 0, 0, {}, out}, in[0]);
}
inline void all_gather_kernel(std::span<const View> in, const View& out, const Attrs& a) {
  run({detail::CollectiveKind::all_gather, ReduceOp::sum, static_cast<int>(decode<AllGatherAttrs>(a).dim), 0, {}, out},
      in[0]);
}
inline void reduce_scatter_kernel(std::span<const View> in, const View& out, const Attrs& a) {
  const ReduceScatterAttrs r = decode<ReduceScatterAttrs>(a);
  run({detail::CollectiveKind::reduce_scatter, r.op, static_cast<int>(r.dim), 0, {}, out}, in[0]);
}
inline void broadcast_kernel(std::span<const View> in, const View& out, const Attrs& a) {
  run({detail::CollectiveKind::broadcast, ReduceOp::sum, 0, static_cast<int>(decode<BroadcastAttrs>(a).root), {}, out},
      in[0]);
}

}  // namespace lt::collective

namespace lt::grad::rule {

/// A sum over replicas sends each replica the sum of the replicas' gradients.
inline void all_reduce(GradContext& c) {
  const ReduceOp op = decode<AllReduceAttrs>(c.attrs).op;
  LT_CHECK(op == ReduceOp::sum, "backward: all_reduce ", reduce_op_name(op), " has no gradient");
  c.set(0, grad::apply(OpId::all_reduce, {c.grad}, c.attrs));
}
/// Each replica's shard of the gathered gradient, summed over the replicas that used it.
inline void all_gather(GradContext& c) {
  c.set(0, grad::apply(OpId::reduce_scatter, {c.grad},
                       encode(ReduceScatterAttrs{ReduceOp::sum, decode<AllGatherAttrs>(c.attrs).dim})));
}
inline void reduce_scatter(GradContext& c) {
  const ReduceScatterAttrs r = decode<ReduceScatterAttrs>(c.attrs);
  LT_CHECK(r.op == ReduceOp::sum, "backward: reduce_scatter ", reduce_op_name(r.op), " has no gradient");
  c.set(0, grad::apply(OpId::all_gather, {c.grad}, encode(AllGatherAttrs{r.dim})));
}

}  // namespace lt::grad::rule

namespace lt::collective {
LT_DEFINE_OP(all_reduce, OpDesc{.kind = OpKind::collective,
                                .arity = 1,
                                .infer = &all_reduce_infer,
                                .kernel = &all_reduce_kernel,
                                .grad = &grad::rule::all_reduce});
LT_DEFINE_OP(all_gather, OpDesc{.kind = OpKind::collective,
                                .arity = 1,
                                .infer = &all_gather_infer,
                                .kernel = &all_gather_kernel,
                                .grad = &grad::rule::all_gather});
LT_DEFINE_OP(reduce_scatter, OpDesc{.kind = OpKind::collective,
                                    .arity = 1,
                                    .infer = &reduce_scatter_infer,
                                    .kernel = &reduce_scatter_kernel,
                                    .grad = &grad::rule::reduce_scatter});
// Not differentiable, as torch.distributed.broadcast: it copies parameters, outside any graph
// that is differentiated.
LT_DEFINE_OP(broadcast, OpDesc{.kind = OpKind::collective,
                               .arity = 1,
                               .infer = &broadcast_infer,
                               .kernel = &broadcast_kernel,
                               .grad = &not_differentiable});
}  // namespace lt::collective
