#pragma once
// Runs a Plan: its steps in order, each a node run alone by its kernel or a fusion group run by
// the row loop (row_loop.hpp), with the values freed after their last reader.
#include <cstddef>
#include <vector>

#include "lazytensor/compile/plan.hpp"
#include "lazytensor/core/metrics.hpp"
#include "lazytensor/ops/execute.hpp"
#include "lazytensor/ops/kernel_levels.hpp"
#include "lazytensor/runtime/fault_site.hpp"
#include "lazytensor/runtime/profile_kernel.hpp"
#include "lazytensor/runtime/profiler_events.hpp"
#include "lazytensor/runtime/row_loop.hpp"

namespace lt {

namespace detail {
/// What a run of a plan leaves to the next run of it. A shape-static loop runs the same plan
/// every step, and for a small step making these again costs as much as running it: the row
/// loops bound (one slot per group), and the storage of the value table and use counts.
struct PlanRunScratch {
  std::vector<std::unique_ptr<RowLoop>> loops;
  std::vector<Array> values;  // every entry empty between runs
  std::vector<int> uses;
  std::vector<std::shared_ptr<const profiler::detail::SpanNote>> kernel_notes;  // per step, made when first profiled
};
}  // namespace detail

/// Runs `plan` on graph `s`, which fits it (first_difference(plan, s) < 0): the plan's steps
/// over the graph's nodes, their data and attributes. Returns one value per root. Values are
/// freed after their last reader.
inline std::vector<Array> run_plan(const Plan& plan, const Schedule& s) {
  std::shared_ptr<detail::PlanRunScratch> scratch = std::static_pointer_cast<detail::PlanRunScratch>(plan.run_state->take());
  if (!scratch) {
    scratch = std::make_shared<detail::PlanRunScratch>();
    scratch->loops.resize(plan.groups.size());
  }
  std::vector<Array>& values = scratch->values;
  values.resize(s.order.size());
  // One block for every intermediate; from the block cache, so steps reuse it. Counted in
  // bytes summed over runs, as every metric counter is.
  static metrics::Counter& arena_bytes = metrics::counter_handle("ArenaBytes");
  arena_bytes.add(plan.stats.arena_bytes);
  static metrics::Counter& row_loop_groups = metrics::counter_handle("RowLoopGroups");
  static metrics::Counter& tile_view_groups = metrics::counter_handle("TileViewGroups");
  const Buffer arena = plan.stats.arena_bytes > 0 ? Buffer(static_cast<std::size_t>(plan.stats.arena_bytes)) : Buffer();
  std::vector<int>& uses = scratch->uses;
  uses.assign(s.uses.begin(), s.uses.end());
  for (std::size_t p = 0; p < s.order.size(); ++p)
    if (s.order[p]->is_data()) values[p] = s.order[p]->leaf().data;
  auto release_inputs = [&](int p) {
    for (int q : s.inputs[static_cast<std::size_t>(p)]) {
      Array& value = values[static_cast<std::size_t>(q)];
      // Most values of a fused group never leave it: nothing to free.
      if (--uses[static_cast<std::size_t>(q)] == 0 && value.defined()) value = {};
    }
  };
  std::vector<Array> args;
  // A loop bound by the plan's last run is bound again only where the graph may differ.
  auto bound_loop = [&](std::size_t group) -> detail::RowLoop& {
    std::unique_ptr<detail::RowLoop>& loop = scratch->loops[group];
    if (loop && loop->rebind(s, values)) return *loop;
    loop = std::make_unique<detail::RowLoop>(plan, s, plan.groups[group], values);
    loop->bind();
    return *loop;
  };
  const profiler::detail::Track device_track = profiler::detail::device_steps(detail::current_lazy_index);
  if (profiler::detail::on()) profiler::detail::record_counter(device_track.device, "arena bytes", static_cast<double>(plan.stats.arena_bytes));
  for (const PlanStep& step : plan.steps) {
    profiler::detail::Span kernel_span("kernel", "kernel", device_track);
    if (kernel_span.live()) {
      auto& notes = scratch->kernel_notes;
      const auto at = static_cast<std::size_t>(&step - plan.steps.data());
      if (notes.size() != plan.steps.size()) notes.assign(plan.steps.size(), nullptr);
      if (!notes[at]) notes[at] = detail::kernel_note(plan, s, step);
      kernel_span.share(notes[at]);
    }
    if (step.group >= 0) {
      const FusionGroup& g = plan.groups[static_cast<std::size_t>(step.group)];
      detail::RowLoop& loop = bound_loop(static_cast<std::size_t>(step.group));
      row_loop_groups.add();
      if (loop.runs_on_views()) tile_view_groups.add();
      loop.run(arena);
      for (const GroupMember& m : g.members)
        if (m.role != MemberRole::constant) release_inputs(m.position);
      continue;
    }
    const Node& n = *s.order[static_cast<std::size_t>(step.position)];
    args.clear();
    for (int q : s.inputs[static_cast<std::size_t>(step.position)]) args.push_back(values[static_cast<std::size_t>(q)]);
    try {
      if (plan.arena_offset[static_cast<std::size_t>(step.position)] >= 0) {
        Array into = detail::output_array(plan, arena, step.position);
        values[static_cast<std::size_t>(step.position)] = execute_op(*n.op, args, n.attrs, n.meta, &into);
      } else {
        values[static_cast<std::size_t>(step.position)] = execute_op(*n.op, args, n.attrs, n.meta);
      }
    } catch (const Error&) {
      detail::raise_recorded_at(n);
    }
    release_inputs(step.position);
  }
  std::vector<Array> out;
  out.reserve(s.roots.size());
  for (int r : s.roots) out.push_back(values[static_cast<std::size_t>(r)]);
  for (Array& v : values)
    if (v.defined()) v = {};
  plan.run_state->keep(std::move(scratch));
  return out;
}

}  // namespace lt
