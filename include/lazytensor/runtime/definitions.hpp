#pragma once
// The runtime's entry points (runtime/api.hpp), defined: included once per program, by the
// implementation (lazytensor/implementation.hpp), never by a file of its own.
#include <algorithm>
#include <mutex>
#include <cstdio>
#include <ostream>
#include <string>
#include <unordered_set>
#include <vector>

#include "lazytensor/core/replica.hpp"
#include "lazytensor/ops/kernels/strided.hpp"
#include "lazytensor/runtime/barrier.hpp"
#include "lazytensor/runtime/values.hpp"

namespace lt {

void sync(Device dev) {
  LT_CHECK(dev.is_lazy(), "sync: ", dev, " is not a lazy device");
  static metrics::Counter& mark_step = metrics::counter_handle("MarkStep");
  mark_step.add();
  detail::TraceClock::Barrier timing(dev.index);
  LazyContext& context = lazy_context(dev.index);
  if (!detail::async_enabled()) {
    auto [pending, prepared] = detail::take_and_prepare(context, [](const auto& p) { return detail::prepare_targets(p); });
    if (prepared) detail::run_and_cut(pending, *prepared);
    std::vector<detail::StepClosure> closures = detail::take_step_closures(dev.index);
    detail::run_step_closures(closures);
    return;
  }
  detail::StepQueue& queue = detail::step_queue(dev.index);
  queue.wait_idle();
  if (std::exception_ptr e = queue.take_error()) std::rethrow_exception(e);
  auto [pending, step] = detail::take_and_prepare(context, [](const auto& p) { return detail::prepare_queued_step(p); });
  if (step) {
    detail::enqueue_step(queue, pending, std::move(*step));
  } else {  // nothing to run: the steps before have run
    std::vector<detail::StepClosure> closures = detail::take_step_closures(dev.index);
    detail::run_step_closures(closures);
  }
}

void initialize_cache(const std::string& path, bool readonly) { detail::persistent_cache().open(path, readonly); }

namespace debug {
void explain_compiles(bool on) { lt::detail::explain_requested.store(on, std::memory_order_relaxed); }

std::string last_compile_reason() {
  auto& r = lt::detail::last_reason();
  std::lock_guard lock(r.mu);
  return r.text;
}

PlanStats plan_stats(const std::vector<Tensor>& tensors) {
  std::vector<NodePtr> roots;
  for (const Tensor& t : tensors)
    if (t.device().is_lazy() && !t.impl().node->is_data()) {
      roots.push_back(t.impl().node);
      lt::detail::wait_for_device(t.device());
    }
  return make_plan(without_failed_leaves(roots)).stats;
}
}  // namespace debug

void wait_device_ops() {
  if (!detail::async_enabled()) return;
  if (detail::replica_slot().group != nullptr) {
    // A replica waits for its own device: the others' steps and errors are theirs.
    detail::StepQueue& own = detail::step_queue(detail::current_lazy_index);
    own.wait_idle();
    if (std::exception_ptr e = own.take_error()) std::rethrow_exception(e);
    return;
  }
  detail::wait_all_steps();
  for (detail::StepQueue& q : detail::step_queues().queues)
    if (std::exception_ptr e = q.take_error()) std::rethrow_exception(e);
}

namespace detail {
/// Forgets the fault of every failed step whose leaves the graph of `root` reads: a read of a
/// value derived from them raised that fault, so the next barrier must not raise it again.
/// The device is idle: every step the graph reads has finished.
void forget_faults_read_by(const NodePtr& root, StepQueue& queue) {
  std::vector<const Node*> stack{root.get()};
  std::unordered_set<const Node*> seen{root.get()};
  while (!stack.empty()) {
    const Node* n = stack.back();
    stack.pop_back();
    if (n->is_data()) {
      if (const auto& step = n->leaf().step; step && step->wait()) queue.forget_error(step.get());
      continue;
    }
    for (const NodePtr& in : n->inputs)
      if (seen.insert(in.get()).second) stack.push_back(in.get());
  }
}
}  // namespace detail

Array materialize(const Tensor& t) {
  TensorImpl& impl = t.impl();
  if (!impl.device.is_lazy()) return impl.data;
  const std::shared_ptr<PendingStep> step = impl.node->is_data() ? impl.node->leaf().step : nullptr;
  if (step && detail::async_enabled()) detail::step_queue(impl.device.index).wait_for(step.get());
  if (step ? !step->wait() : impl.node->is_data()) return impl.node->leaf().data;
  // A pending value, or the result of a failed step: computed here from its graph, so that a
  // sound value is read and a bad one raises its error again. The graph reads leaves of the
  // steps queued before.
  detail::wait_for_device(impl.device);
  TensorImplPtr self = t.impl_ptr();
  try {
    detail::compute_and_cut(std::span(&self, 1));
  } catch (...) {
    detail::StepQueue& queue = detail::step_queue(impl.device.index);
    if (step) queue.forget_error(step.get());
    else detail::forget_faults_read_by(impl.node, queue);  // a value derived from a failed step's
    throw;
  }
  return impl.node->leaf().data;
}

namespace detail {
Array read_contiguous(const Tensor& t, DType as) {
  // Spans the wait for the step that computes t, the read's usual cost.
  profiler::detail::Span span("read from device", "transfer");
  if (span.live()) span.arg("bytes", static_cast<double>(t.numel()) * static_cast<double>(itemsize(as)));
  Array a = materialize(t);
  if (t.device().is_lazy()) metrics::counter_handle("TransferFromDevice").add();
  if (a.view.contiguous() && a.view.dtype == as) return a;
  Array c = Array::empty(as, a.view.shape);
  if (c.view.numel() > 0) kernels::copy_into(a.view, c.view);
  return c;
}
}  // namespace detail

Tensor Tensor::cpu() const { return to(lt::cpu); }

Tensor Tensor::to(Device target) const {
  if (device() == target) return *this;
  Array a = device().is_lazy() ? detail::read_contiguous(*this, dtype()) : impl().data;
  if (target.is_lazy()) {
    metrics::counter_handle("TransferToDevice").add();
    profiler::detail::Span span("copy to device", "transfer");
    if (span.live()) span.arg("bytes", static_cast<double>(a.view.numel()) * static_cast<double>(itemsize(a.view.dtype)));
    // The device owns its copy: later writes to the source must not show through.
    Array copy = Array::empty(a.view.dtype, a.view.shape);
    if (copy.view.numel() > 0) kernels::copy_into(a.view, copy.view);
    a = copy;
  }
  return tensor_from_array(a, target);
}

namespace detail {
inline void print_element(std::ostream& os, const View& v, std::int64_t offset) {
  visit(v.dtype, [&]<class T>(Tag<T>) {
    T x = v.ptr<T>()[offset];
    if constexpr (std::is_same_v<T, bool>) os << (x ? "true" : "false");
    else if constexpr (std::is_floating_point_v<T>) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.4f", static_cast<double>(x));
      os << buf;
    } else os << x;
  });
}
inline void print_dim(std::ostream& os, const View& v, int dim, std::int64_t offset, int indent) {
  constexpr std::int64_t edge = 3;  // elements shown at each end of a long dim
  if (dim == v.shape.rank()) return print_element(os, v, offset);
  std::int64_t n = v.shape[dim];
  os << '[';
  for (std::int64_t i = 0; i < n; ++i) {
    if (n > 2 * edge + 1 && i == edge) {
      os << "...";
      i = n - edge - 1;
    } else {
      print_dim(os, v, dim + 1, offset + i * v.strides[dim], indent + 1);
    }
    if (i + 1 < n) os << (dim + 1 < v.shape.rank() ? ",\n" + std::string(static_cast<std::size_t>(indent + 1), ' ') : ", ");
  }
  os << ']';
}
}  // namespace detail

/// Prints the values (long dims abbreviated), then dtype, shape and device.
std::ostream& operator<<(std::ostream& os, const Tensor& t) {
  if (!t.defined()) return os << "<undefined tensor>";
  Array a = detail::read_contiguous(t, t.dtype());
  detail::print_dim(os, a.view, 0, 0, 0);
  return os << "\n<" << name(t.dtype()) << t.shape() << " on " << t.device() << ">";
}

}  // namespace lt
