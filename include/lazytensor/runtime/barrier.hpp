#pragma once
// The barrier: computes every pending value of a lazy device, then cuts the graph, so that
// results become device data and the graph does not grow across steps.
#include <cstdlib>
#include <string_view>
#include <vector>

#include "lazytensor/core/metrics.hpp"
#include "lazytensor/ops/leaf.hpp"
#include "lazytensor/runtime/plan_executor.hpp"
#include "lazytensor/runtime/reference_executor.hpp"
#include "lazytensor/trace/lazy_context.hpp"

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

/// Computes `targets` together and rebinds each to a device_data leaf of its value. On a
/// failure the targets keep their pending values, so reading one raises the error again.
inline void compute_and_cut(std::span<const std::shared_ptr<TensorImpl>> targets) {
  std::vector<NodePtr> roots;
  roots.reserve(targets.size());
  for (const auto& t : targets) roots.push_back(t->node);
  std::vector<Array> values = run_graph(roots);
  for (std::size_t k = 0; k < targets.size(); ++k) targets[k]->node = make_data_node(leaf::device_data, values[k]);
}
}  // namespace detail

/// The barrier of lazy device `dev`: runs its pending graph. Nothing to run is not an error.
inline void sync(Device dev = device()) {
  LT_CHECK(dev.is_lazy(), "sync: ", dev, " is not a lazy device");
  metrics::counter_handle("MarkStep").add();
  auto pending = lazy_context(dev.index).take_pending();
  if (!pending.empty()) detail::compute_and_cut(pending);
}

namespace debug {
/// What the barrier would run for `tensors`' pending graph: kernels, fused groups and the bytes
/// of full-size intermediates. Runs nothing.
inline PlanStats plan_stats(const std::vector<Tensor>& tensors) {
  std::vector<NodePtr> roots;
  for (const Tensor& t : tensors)
    if (t.device().is_lazy() && !t.impl().node->is_data()) roots.push_back(t.impl().node);
  return make_plan(roots).stats;
}
}  // namespace debug

/// Alias of sync(), PyTorch/XLA's name.
inline void mark_step(Device dev = device()) { sync(dev); }

/// Waits until every queued step has finished. Steps run synchronously for now, so a
/// returning sync() has already finished its step.
inline void wait_device_ops() {}

/// The value of `t`, computing what it still needs (not a barrier: other pending tensors
/// stay pending).
inline Array materialize(const Tensor& t) {
  TensorImpl& impl = t.impl();
  if (!impl.device.is_lazy()) return impl.data;
  if (!impl.node->is_data()) {
    std::shared_ptr<TensorImpl> self = t.impl_ptr();
    detail::compute_and_cut(std::span(&self, 1));
  }
  return impl.node->data;
}

}  // namespace lt
