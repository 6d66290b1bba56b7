#pragma once
// The barrier: queues every pending value of a lazy device as one step for the device's worker
// and cuts the graph at once, so that results become device data (pending leaves until the
// step has run) and the graph does not grow across steps. Reads wait for the values.
#include <cstdlib>
#include <string_view>
#include <vector>

#include "lazytensor/core/metrics.hpp"
#include "lazytensor/ops/leaf.hpp"
#include "lazytensor/runtime/plan_executor.hpp"
#include "lazytensor/runtime/reference_executor.hpp"
#include "lazytensor/runtime/step_queue.hpp"
#include "lazytensor/trace/lazy_context.hpp"
#include "lazytensor/trace/pending.hpp"

namespace lt {

namespace detail {
/// LT_FUSION=0 runs graphs with the reference executor, node by node: the oracle.
inline bool fusion_enabled() {
  static const bool enabled = [] {
    const char* v = std::getenv("LT_FUSION");
    return v == nullptr || std::string_view(v) != "0";
  }();
  return enabled;
}

/// Compiles a graph and runs it, timing each part.
template <class Compile, class Run>
std::vector<Array> compile_and_run(Compile&& compile, Run&& run) {
  auto compiled = [&] {
    metrics::ScopedTimer t(metrics::timer_handle("CompileTime"));
    return compile();
  }();
  metrics::counter_handle("UncachedCompile").add();
  metrics::ScopedTimer t(metrics::timer_handle("ExecuteTime"));
  return run(std::move(compiled));
}

inline std::vector<Array> run_graph(std::span<const NodePtr> roots) {
  if (fusion_enabled()) return compile_and_run([&] { return make_plan(roots); }, [](const Plan& p) { return run_plan(p); });
  return compile_and_run([&] { return make_schedule(roots); }, [](Schedule s) { return run_schedule(std::move(s)); });
}

/// Computes `targets` together on this thread and rebinds each to a device_data leaf of its
/// value. On a failure the targets keep their pending values, so reading one raises the error
/// again. A leaf of a failed step is computed from the graph it stands for.
inline void compute_and_cut(std::span<const std::shared_ptr<TensorImpl>> targets) {
  std::vector<NodePtr> roots;
  roots.reserve(targets.size());
  for (const auto& t : targets) roots.push_back(t->node);
  std::vector<Array> values = run_graph(without_failed_leaves(roots));
  for (std::size_t k = 0; k < targets.size(); ++k) targets[k]->node = make_data_node(leaf::device_data, values[k]);
}

/// Waits for the steps queued on `dev`: the graphs of `dev` may read their leaves.
inline void wait_for_device(Device dev) {
  if (async_enabled()) step_queue(dev.index).wait_idle();
}

/// Rebinds each target to a pending leaf of a new step and queues the step on `queue`, which
/// runs it in an arena as wide as the one this thread runs in. The previous step has finished.
inline void queue_step(StepQueue& queue, std::span<const std::shared_ptr<TensorImpl>> targets) {
  auto step = std::make_shared<PendingStep>();
  std::vector<NodePtr> roots;
  roots.reserve(targets.size());
  for (const auto& t : targets) roots.push_back(t->node);
  step->roots = without_failed_leaves(roots);
  step->leaves.reserve(targets.size());
  for (const auto& t : targets) {
    std::shared_ptr<Node> leaf = make_pending_leaf(t->node->meta, step);
    step->leaves.push_back(leaf);
    t->node = std::move(leaf);
  }
  queue.enqueue(std::move(step), tbb::this_task_arena::max_concurrency(), &run_graph);
}
}  // namespace detail

/// The barrier of lazy device `dev`. It takes the device's pending tensors, rebinds each to a
/// leaf whose value is still to come, queues their graph as one step on the device's worker
/// and returns: tracing the next step overlaps running this one. A device runs one step at a
/// time, so a barrier first waits for the step before it, and raises that step's error if it
/// failed and nothing raised it yet (then it takes nothing: pending tensors stay pending).
/// Nothing to run is not an error. With LT_ASYNC=0 the step runs here and raises at once.
inline void sync(Device dev = device()) {
  LT_CHECK(dev.is_lazy(), "sync: ", dev, " is not a lazy device");
  metrics::counter_handle("MarkStep").add();
  if (!detail::async_enabled()) {
    auto pending = lazy_context(dev.index).take_pending();
    if (!pending.empty()) detail::compute_and_cut(pending);
    return;
  }
  detail::StepQueue& queue = detail::step_queue(dev.index);
  queue.wait_idle();
  if (std::exception_ptr e = queue.take_error()) std::rethrow_exception(e);
  auto pending = lazy_context(dev.index).take_pending();
  if (!pending.empty()) detail::queue_step(queue, pending);
}

namespace debug {
/// What the barrier would run for `tensors`' pending graph: kernels, fused groups and the bytes
/// of full-size intermediates. Runs nothing.
inline PlanStats plan_stats(const std::vector<Tensor>& tensors) {
  std::vector<NodePtr> roots;
  for (const Tensor& t : tensors)
    if (t.device().is_lazy() && !t.impl().node->is_data()) {
      roots.push_back(t.impl().node);
      lt::detail::wait_for_device(t.device());
    }
  return make_plan(without_failed_leaves(roots)).stats;
}
}  // namespace debug

/// Alias of sync(), PyTorch/XLA's name.
inline void mark_step(Device dev = device()) { sync(dev); }

/// Waits until every queued step of every lazy device has finished, then raises the error of
/// a failed step that no barrier or read has raised yet.
inline void wait_device_ops() {
  if (!detail::async_enabled()) return;
  detail::wait_all_steps();
  for (detail::StepQueue& q : detail::step_queues().queues)
    if (std::exception_ptr e = q.take_error()) std::rethrow_exception(e);
}

/// The value of `t`, waiting for the step that computes it, or computing here what it still
/// needs (not a barrier: other pending tensors stay pending).
inline Array materialize(const Tensor& t) {
  TensorImpl& impl = t.impl();
  if (!impl.device.is_lazy()) return impl.data;
  const std::shared_ptr<PendingStep> step = impl.node->step;
  if (step ? !step->wait() : impl.node->is_data()) return impl.node->data;
  // A pending value, or the result of a failed step: computed here from its graph, so that a
  // sound value is read and a bad one raises its error again. The graph reads leaves of the
  // steps queued before.
  detail::wait_for_device(impl.device);
  std::shared_ptr<TensorImpl> self = t.impl_ptr();
  try {
    detail::compute_and_cut(std::span(&self, 1));
  } catch (...) {
    if (step) detail::step_queue(impl.device.index).forget_error(step.get());
    throw;
  }
  return impl.node->data;
}

}  // namespace lt
