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

namespace lt::collective {

/// Attributes. all_reduce: {op}; all_gather: {dim}; reduce_scatter: {op, dim}; broadcast:
/// {root}. `op` is sum, max or min: a mean is traced as a sum and a scale.
inline ReduceOp attr_op(const Attrs& a) { return static_cast<ReduceOp>(a.ints[0]); }

inline void check_reducible(const Meta& m) {
  LT_CHECK(m.dtype == DType::f32 || m.dtype == DType::f64 || m.dtype == DType::i32 || m.dtype == DType::i64,
           "reduces f32, f64, i32 and i64 values, not ", m.dtype);
}
inline void check_transferable(const Meta& m) {
  LT_CHECK(m.dtype != DType::bf16, "bf16 values are not supported yet");
}
inline void check_dim(const Meta& m, std::int64_t dim) {
  LT_CHECK(m.shape.rank() > 0, "needs a tensor of rank 1 or more, got a scalar");
  LT_CHECK(dim >= 0 && dim < m.shape.rank(), "dim ", dim, " is out of range for rank ", m.shape.rank());
}

inline Meta all_reduce_infer(std::span<const Meta> in, const Attrs& a) {
  check_reducible(in[0]);
  LT_CHECK(attr_op(a) != ReduceOp::mean, "a mean is a sum and a scale");
  return {in[0].shape, in[0].dtype};
}

inline Meta all_gather_infer(std::span<const Meta> in, const Attrs& a) {
  check_transferable(in[0]);
  check_dim(in[0], a.ints[0]);
  Meta out{in[0].shape, in[0].dtype};
  out.shape[static_cast<int>(a.ints[0])] *= world_size();
  return out;
}

inline Meta reduce_scatter_infer(std::span<const Meta> in, const Attrs& a) {
  check_reducible(in[0]);
  check_dim(in[0], a.ints[1]);
  const int dim = static_cast<int>(a.ints[1]), world = world_size();
  LT_CHECK(in[0].shape[dim] % world == 0, "dim ", dim, " of extent ", in[0].shape[dim],
           " does not split into ", world, " equal shards");
  Meta out{in[0].shape, in[0].dtype};
  out.shape[dim] /= world;
  return out;
}

inline Meta broadcast_infer(std::span<const Meta> in, const Attrs& a) {
  check_transferable(in[0]);
  LT_CHECK(a.ints[0] >= 0 && a.ints[0] < world_size(), "root ", a.ints[0], " is not an ordinal of a world of ",
           world_size());
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
  run({detail::CollectiveKind::all_reduce, attr_op(a), 0, 0, {}, out}, in[0]);
}
inline void all_gather_kernel(std::span<const View> in, const View& out, const Attrs& a) {
  run({detail::CollectiveKind::all_gather, ReduceOp::sum, static_cast<int>(a.ints[0]), 0, {}, out}, in[0]);
}
inline void reduce_scatter_kernel(std::span<const View> in, const View& out, const Attrs& a) {
  run({detail::CollectiveKind::reduce_scatter, attr_op(a), static_cast<int>(a.ints[1]), 0, {}, out}, in[0]);
}
inline void broadcast_kernel(std::span<const View> in, const View& out, const Attrs& a) {
  run({detail::CollectiveKind::broadcast, ReduceOp::sum, 0, static_cast<int>(a.ints[0]), {}, out}, in[0]);
}

}  // namespace lt::collective

namespace lt::grad::rule {

/// A sum over replicas sends each replica the sum of the replicas' gradients.
inline void all_reduce(GradContext& c) {
  LT_CHECK(collective::attr_op(c.attrs) == ReduceOp::sum, "backward: all_reduce ",
           reduce_op_name(collective::attr_op(c.attrs)), " has no gradient");
  c.set(0, grad::apply(OpId::all_reduce, {c.grad}, c.attrs));
}
/// Each replica's shard of the gathered gradient, summed over the replicas that used it.
inline void all_gather(GradContext& c) {
  c.set(0, grad::apply(OpId::reduce_scatter, {c.grad}, Attrs{{static_cast<std::int64_t>(ReduceOp::sum), c.attrs.ints[0]}, {}}));
}
inline void reduce_scatter(GradContext& c) {
  LT_CHECK(collective::attr_op(c.attrs) == ReduceOp::sum, "backward: reduce_scatter ",
           reduce_op_name(collective::attr_op(c.attrs)), " has no gradient");
  c.set(0, grad::apply(OpId::all_gather, {c.grad}, Attrs{{c.attrs.ints[1]}, {}}));
}

}  // namespace lt::grad::rule

namespace lt::collective {
LT_DEFINE_OP(all_reduce, with_grad(OpDesc{OpId::all_reduce, "all_reduce", OpKind::collective, 1, &all_reduce_infer,
                                          &all_reduce_kernel}, &grad::rule::all_reduce));
LT_DEFINE_OP(all_gather, with_grad(OpDesc{OpId::all_gather, "all_gather", OpKind::collective, 1, &all_gather_infer,
                                          &all_gather_kernel}, &grad::rule::all_gather));
LT_DEFINE_OP(reduce_scatter, with_grad(OpDesc{OpId::reduce_scatter, "reduce_scatter", OpKind::collective, 1,
                                              &reduce_scatter_infer, &reduce_scatter_kernel}, &grad::rule::reduce_scatter));
// Not differentiable, as torch.distributed.broadcast: it copies parameters, outside any graph
// that is differentiated.
LT_DEFINE_OP(broadcast, with_grad(OpDesc{OpId::broadcast, "broadcast", OpKind::collective, 1, &broadcast_infer,
                                        &broadcast_kernel}, &not_differentiable));
}  // namespace lt::collective
