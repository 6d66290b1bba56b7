#pragma once
// The barrier: queues every pending value of a lazy device as one step for the device's worker
// and cuts the graph at once, so that results become device data (pending leaves until the
// step has run) and the graph does not grow across steps. Reads wait for the values.
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <future>
#include <mutex>
#include <unordered_map>
#include <optional>
#include <utility>
#include <string_view>
#include <vector>

#include "lazytensor/core/env.hpp"
#include "lazytensor/core/metrics.hpp"
#include "lazytensor/ops/kernel_levels.hpp"
#include "lazytensor/ops/leaf.hpp"
#include "lazytensor/runtime/api.hpp"
#include "lazytensor/runtime/nan_scan.hpp"
#include "lazytensor/runtime/persistent_cache.hpp"
#include "lazytensor/runtime/plan_cache.hpp"
#include "lazytensor/runtime/plan_executor.hpp"
#include "lazytensor/runtime/profiler_events.hpp"
#include "lazytensor/runtime/recompile_reason.hpp"
#include "lazytensor/runtime/reference_executor.hpp"
#include "lazytensor/runtime/step_queue.hpp"
#include "lazytensor/runtime/trace_clock.hpp"
#include "lazytensor/trace/tensor.hpp"
#include "lazytensor/trace/pending.hpp"

namespace lt {

namespace detail {
/// LT_FUSION=0 runs graphs with the reference executor, node by node: the oracle.
inline bool fusion_enabled() {
  static const bool enabled = env_flag("LT_FUSION", true);
  return enabled;
}

/// A step ready to run: its graph walked, and its plan when a cache had it.
struct PreparedStep {
  Schedule schedule;
  std::shared_ptr<const Plan> plan;  // null: compiled when the step runs
  std::vector<NodePtr> roots;        // where set: holds nodes made for the step, which the schedule points at
  std::uint64_t flow = 0;            // the profiler's arrow from the barrier to the step; 0: none
};

/// Opens the profiler's arrow from the barrier that prepares `p` to where `p` runs.
inline void start_flow(PreparedStep& p) {
  if (!profiler::detail::on()) return;
  p.flow = profiler::detail::next_flow_id();
  if (!profiler::detail::record_flow(p.flow, true, {}, profiler::detail::now_ns())) p.flow = 0;
}

/// On the barrier's thread: walks the graph of `roots` and looks up its plan. A cached plan is
/// checked against the graph before it is taken (a mismatch counts as CacheCollision and
/// compiles). Inside an lt::expect_cached scope a graph that would compile raises lt::Error.
inline PreparedStep prepare_step(std::span<const NodePtr> roots) {
  running_kernels();  // a bad LT_CPU_CAPABILITY is raised here, on the caller's thread, not on the worker's
  profiler::detail::Span walk("graph walk + hash", "barrier");
  PreparedStep p{make_schedule(roots), nullptr, {}};
  if (walk.live()) walk.arg("nodes", static_cast<double>(p.schedule.order.size()));
  walk.end();
  start_flow(p);
  profiler::detail::Span look_up("plan cache look-up", "barrier");
  if (fusion_enabled()) {
    static metrics::Counter& collisions = metrics::counter_handle("CacheCollision");
    // A plan is taken only after it is checked against the graph: keys can collide.
    auto fitting = [&](std::shared_ptr<const Plan> plan) {
      if (plan && first_difference(*plan, p.schedule) >= 0) {
        collisions.add();
        return std::shared_ptr<const Plan>();
      }
      return plan;
    };
    PlanCache& cache = plan_cache();
    p.plan = fitting(cache.find(p.schedule.key));
    if (!p.plan && persistent_cache().enabled()) {
      p.plan = fitting(persistent_cache().load(p.schedule.key));
      if (p.plan) cache.insert(p.plan);
    }
    if (p.plan) {
      static metrics::Counter& cached = metrics::counter_handle("CachedCompile");
      cached.add();
      look_up.arg("hit", 1.0);
      return p;
    }
  }
  if (explaining()) {
    std::string why = fusion_enabled() ? note_compile_reason(p.schedule, plan_cache())
                                       : std::string("LT_FUSION=0: the reference executor runs every graph uncached");
    if (expect_cached_depth > 0) fail("expect_cached: a graph compiles inside the scope: ", why);
  }
  return p;
}

/// The plan of `s`, compiled and cached. When several threads miss the cache for one graph at
/// once (the replicas of a launch run the same steps), one compiles and the others wait for its
/// plan: a replicated step compiles once per process.
inline std::shared_ptr<const Plan> compile_once(const Schedule& s) {
  static metrics::Counter& uncached = metrics::counter_handle("UncachedCompile");
  static metrics::Counter& cached = metrics::counter_handle("CachedCompile");
  static metrics::Timer& compile_time = metrics::timer_handle("CompileTime");
  using Shared = std::shared_future<std::shared_ptr<const Plan>>;
  static std::mutex mu;
  static std::unordered_map<hash_t, Shared> compiling;  // guarded by mu
  auto fits = [&](const std::shared_ptr<const Plan>& plan) { return plan && first_difference(*plan, s) < 0; };
  std::promise<std::shared_ptr<const Plan>> mine;
  Shared theirs;
  {
    std::lock_guard lock(mu);
    if (std::shared_ptr<const Plan> plan = plan_cache().find(s.key); fits(plan)) {
      cached.add();
      return plan;
    }
    auto [at, fresh] = compiling.try_emplace(s.key, mine.get_future().share());
    if (!fresh) theirs = at->second;
  }
  if (theirs.valid()) {
    if (std::shared_ptr<const Plan> plan = theirs.get(); fits(plan)) {
      cached.add();
      return plan;
    }
  }
  auto done = [&] {
    if (theirs.valid()) return;  // a colliding key: this plan was never announced
    std::lock_guard lock(mu);
    compiling.erase(s.key);
  };
  std::shared_ptr<const Plan> plan;
  try {
    metrics::ScopedTimer t(compile_time);
    profiler::detail::Span span("compile", "compile", profiler::detail::device_steps(current_lazy_index));
    plan = std::make_shared<const Plan>(make_plan(s));
    if (span.live()) {
      span.arg("nodes", static_cast<double>(s.order.size()));
      span.arg("kernels", static_cast<double>(plan->stats.kernels));
      span.arg("fused groups", static_cast<double>(plan->stats.fused_groups));
      span.arg("arena bytes", static_cast<double>(plan->stats.arena_bytes));
    }
  } catch (...) {
    if (!theirs.valid()) mine.set_exception(std::current_exception());
    done();
    throw;
  }
  uncached.add();
  plan_cache().insert(plan);
  persistent_cache().store(*plan);
  if (!theirs.valid()) mine.set_value(plan);
  done();
  return plan;
}

/// Runs a prepared step, compiling (and caching) its plan first when no cache had it.
inline std::vector<Array> run_prepared(PreparedStep& p) {
  static metrics::Counter& uncached = metrics::counter_handle("UncachedCompile");
  static metrics::Timer& execute_time = metrics::timer_handle("ExecuteTime");
  const profiler::detail::Track track = profiler::detail::device_steps(current_lazy_index);
  // The arrow ends where the step's execute span starts.
  auto execute_span = [&] {
    profiler::detail::Span span("execute", "execute", track);
    if (span.live()) {
      span.arg("nodes", static_cast<double>(p.schedule.order.size()));
      if (p.flow != 0) profiler::detail::record_flow(p.flow, false, track, span.start_ns());
    }
    return span;
  };
  const bool check = nan_check_flag().load(std::memory_order_relaxed);
  if (!fusion_enabled() || check) {  // the reference executor: no plan, each value made alone
    uncached.add();
    metrics::ScopedTimer t(execute_time);
    profiler::detail::Span span = execute_span();
    return run_schedule(std::move(p.schedule), check ? check_finite : nullptr);
  }
  if (!p.plan) p.plan = compile_once(p.schedule);
  metrics::ScopedTimer t(execute_time);
  profiler::detail::Span span = execute_span();
  return run_plan(*p.plan, p.schedule);
}

/// Prepares the step that computes `targets` together.
inline PreparedStep prepare_targets(std::span<const TensorImplPtr> targets) {
  std::vector<NodePtr> roots;
  roots.reserve(targets.size());
  for (const auto& t : targets) roots.push_back(t->node);
  // A failed leaf is replaced by a node of the graph it stands for: nothing else holds it.
  std::vector<NodePtr> kept = without_failed_leaves(roots);
  if (profiler::detail::on() && !targets.empty())
    profiler::detail::record_counter(targets[0]->device.index, "pending tensors", static_cast<double>(targets.size()));
  PreparedStep p = prepare_step(kept);
  p.roots = std::move(kept);
  return p;
}

/// Runs `prepared` on this thread and rebinds each target to a device_data leaf of its value.
/// On a failure the targets keep their pending values, so reading one raises the error again.
/// A leaf of a failed step is computed from the graph it stands for.
inline void run_and_cut(std::span<const TensorImplPtr> targets, PreparedStep& prepared) {
  std::vector<Array> values = run_prepared(prepared);
  for (std::size_t k = 0; k < targets.size(); ++k) targets[k]->node = make_data_node(leaf::device_data, values[k]);
}

inline void compute_and_cut(std::span<const TensorImplPtr> targets) {
  profiler::detail::Span span("compute for a read", "barrier");
  PreparedStep prepared = prepare_targets(targets);
  run_and_cut(targets, prepared);
}

/// Takes the pending tensors of `context` and prepares them with `prepare`; when that raises,
/// the tensors stay pending (a barrier that raises before its step runs takes nothing).
template <class Prepare>
auto take_and_prepare(LazyContext& context, Prepare&& prepare) {
  auto pending = context.take_pending();
  using Prepared = decltype(prepare(pending));
  std::optional<Prepared> prepared;
  if (pending.empty()) return std::pair{std::move(pending), std::move(prepared)};
  try {
    prepared.emplace(prepare(pending));
  } catch (...) {
    for (const auto& t : pending) context.track(*t);
    throw;
  }
  return std::pair{std::move(pending), std::move(prepared)};
}

/// Waits for the steps queued on `dev`: the graphs of `dev` may read their leaves.
inline void wait_for_device(Device dev) {
  if (async_enabled()) step_queue(dev.index).wait_idle();
}

/// The most elements a step's values may hold in all for the step to run on the barrier's
/// thread (LT_SMALL_STEP_ELEMENTS, default 16384; 0: every step goes to the worker). Waking
/// the worker and then the thread that reads a result costs some microseconds, more than such
/// a step takes to run.
inline std::atomic<std::int64_t>& small_step_elements() {
  static std::atomic<std::int64_t> n{env_count("LT_SMALL_STEP_ELEMENTS", 16384)};
  return n;
}

/// Whether `p` is a small step with its plan at hand (a step still to compile is queued:
/// compiling takes longer than the hand-off).
inline bool runs_in_a_moment(const PreparedStep& p) {
  const std::int64_t limit = small_step_elements().load(std::memory_order_relaxed);
  return p.plan && limit > 0 && p.plan->value_elements <= limit;
}

/// A step for the device's worker: its graph's roots, prepared.
struct QueuedStep {
  std::shared_ptr<PendingStep> step;
  std::shared_ptr<PreparedStep> prepared;
};
inline QueuedStep prepare_queued_step(std::span<const TensorImplPtr> targets) {
  auto step = std::make_shared<PendingStep>();
  std::vector<NodePtr> roots;
  roots.reserve(targets.size());
  for (const auto& t : targets) roots.push_back(t->node);
  step->roots = without_failed_leaves(roots);
  if (profiler::detail::on() && !targets.empty())
    profiler::detail::record_counter(targets[0]->device.index, "pending tensors", static_cast<double>(targets.size()));
  auto prepared = std::make_shared<PreparedStep>(prepare_step(step->roots));
  return {std::move(step), std::move(prepared)};
}

/// Rebinds each target to a pending leaf of the step and queues it on `queue`, which runs it in
/// an arena as wide as the one this thread runs in. The previous step has finished.
inline void enqueue_step(StepQueue& queue, std::span<const TensorImplPtr> targets, QueuedStep q) {
  q.step->leaves.reserve(targets.size());
  for (const auto& t : targets) {
    std::shared_ptr<DataNode> leaf = make_pending_leaf(t->node->meta, q.step);
    q.step->leaves.push_back(leaf);
    t->node = std::move(leaf);
  }
  const bool small = runs_in_a_moment(*q.prepared);
  auto run = [prepared = std::move(q.prepared)] { return run_prepared(*prepared); };
  const int width = tbb::this_task_arena::max_concurrency();
  std::vector<StepClosure> after = targets.empty() ? std::vector<StepClosure>() : take_step_closures(targets[0]->device.index);
  if (small) queue.run_here(std::move(q.step), width, std::move(run), std::move(after));
  else queue.enqueue(std::move(q.step), width, std::move(run), std::move(after));
}
}  // namespace detail

}  // namespace lt
