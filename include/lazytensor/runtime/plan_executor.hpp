#pragma once
// Runs a Plan. A fusion group whose members all have bound forms runs in the row loop
// (row_loop.hpp). Any other runs as one parallel loop over tiles of whole rows: for each
// tile, every member's own kernel runs on tile-sized [rows, row] views, producer before
// consumer, so the values that stay inside the group live in a per-thread scratch buffer that
// fits in cache. Each member computes exactly what it computes alone (a reduction reduces each
// row in the same chunks), so a plan's results equal the reference executor's bit for bit.
// A group led by a product runs its epilogue on the product's tiles (product_group.hpp).
#include <cstddef>
#include <span>
#include <vector>

#include <oneapi/tbb/task_arena.h>

#include "lazytensor/compile/plan.hpp"
#include "lazytensor/core/metrics.hpp"
#include "lazytensor/ops/execute.hpp"
#include "lazytensor/ops/kernel_levels.hpp"
#include "lazytensor/ops/kernels/parallel.hpp"
#include "lazytensor/ops/kernels/strided.hpp"
#include "lazytensor/runtime/fault_site.hpp"
#include "lazytensor/runtime/product_group.hpp"
#include "lazytensor/runtime/profile_kernel.hpp"
#include "lazytensor/runtime/profiler_events.hpp"
#include "lazytensor/runtime/row_loop.hpp"

namespace lt {

namespace detail {

/// Elements per tile: a tile of every member stays in L2, and each member's kernel call is
/// long enough to amortise its set-up.
inline constexpr std::int64_t tile_elements = 8192;

/// `rows` x `row` elements at `data`, rows `row` apart; a row of one value broadcast along the
/// row when `per_row`.
inline View tile_view(std::byte* data, DType t, std::int64_t rows, std::int64_t row, bool per_row = false) {
  return per_row ? View{data, t, Shape{rows, row}, Strides{1, 0}, false}
                 : View{data, t, Shape{rows, row}, Strides{row, 1}, false};
}

/// The members of a group led by a product: their runs counted, the arrays of those made in
/// full in place; then the product runs with its epilogue on each tile.
inline void run_group_led_by_product(const Plan& plan, const Schedule& s, const FusionGroup& g, const Buffer& arena,
                                     std::vector<Array>& values) {
  RunCounts counts;
  for (const GroupMember& m : g.members) {
    counts.add(*s.order[static_cast<std::size_t>(m.position)]->op);
    if (plan.materialized[static_cast<std::size_t>(m.position)])
      values[static_cast<std::size_t>(m.position)] = output_array(plan, arena, m.position);
  }
  run_product_group(plan, s, g, values);
}

inline void run_group(const Plan& plan, const Schedule& s, const FusionGroup& g, const Buffer& arena,
                      std::vector<Array>& values) {
  auto node_at = [&](int p) -> const Node& { return *s.order[static_cast<std::size_t>(p)]; };
  const std::int64_t row = g.row, rows_per_tile = std::max<std::int64_t>(1, tile_elements / row);
  // A reduction runs over [rows, row] tiles: the plan's dims, the live node's data (floats).
  std::vector<Attrs> member_attrs;
  member_attrs.reserve(g.members.size());
  RunCounts counts;
  for (const GroupMember& m : g.members) {
    const Node& n = node_at(m.position);
    member_attrs.push_back(n.op->kind == OpKind::reduction ? reduction::attrs_over_rows(n.attrs) : Attrs{});
    counts.add(*n.op);
    if (plan.materialized[static_cast<std::size_t>(m.position)])
      values[static_cast<std::size_t>(m.position)] = output_array(plan, arena, m.position);
  }
  // How each external is read per tile: in place when it is laid out like its index space, as
  // one broadcast element, or gathered into scratch.
  enum class Read { direct, one, gather };
  std::vector<Read> read;
  std::vector<kernels::Operand> operands;
  std::size_t scratch_bytes = 0;
  std::vector<std::size_t> at;  // scratch offset of each member, then of each gathered external
  auto reserve = [&](std::int64_t elements, DType t) {
    at.push_back(scratch_bytes);
    scratch_bytes += (static_cast<std::size_t>(elements) * itemsize(t) + 63) & ~std::size_t{63};
  };
  for (const GroupMember& m : g.members)
    reserve(m.role == MemberRole::constant ? 1 : m.role == MemberRole::row ? rows_per_tile : rows_per_tile * row,
            node_at(m.position).meta.dtype);
  for (const GroupExternal& e : g.externals) {
    const View& v = values[static_cast<std::size_t>(e.position)].view;
    operands.emplace_back(v, e.index_space);
    read.push_back(operands.back().dense && v.shape == e.index_space ? Read::direct : v.numel() == 1 ? Read::one : Read::gather);
    bool full = e.index_space == g.shape;
    reserve(read.back() == Read::gather ? rows_per_tile * (full ? row : 1) : 0, v.dtype);
  }

  kernels::parallel_blocks(g.rows(), rows_per_tile, [&](std::int64_t r0, std::int64_t r1) {
    // Isolated: a member kernel that runs in parallel itself must not let this thread pick up
    // another tile of this loop while it waits, which would reuse the scratch below.
    tbb::this_task_arena::isolate([&] {
    // Per thread and reused: no allocation per tile once a thread has run one.
    thread_local std::vector<std::byte> scratch;
    thread_local std::vector<View> member_views, external_views, args;
    if (scratch.size() < scratch_bytes + 64) scratch.resize(scratch_bytes + 64);
    std::byte* base = scratch.data() + ((64 - reinterpret_cast<std::uintptr_t>(scratch.data()) % 64) % 64);
    const std::int64_t rows = r1 - r0;
    external_views.clear();
    for (std::size_t k = 0; k < g.externals.size(); ++k) {
      const View& v = values[static_cast<std::size_t>(g.externals[k].position)].view;
      const std::int64_t per = g.externals[k].index_space == g.shape ? row : 1;  // elements per row
      std::byte* slot = base + at[g.members.size() + k];
      switch (read[k]) {
        case Read::direct:
          external_views.push_back(tile_view(v.data + r0 * per * static_cast<std::int64_t>(itemsize(v.dtype)), v.dtype, rows, per));
          break;
        case Read::one:  // zero-dim stays zero-dim, any other single element broadcasts
          external_views.push_back(v.shape.rank() == 0 ? v : View{v.data, v.dtype, Shape{1, 1}, Strides{0, 0}, v.wrapped_number});
          break;
        case Read::gather:
          visit_storage(v.dtype, [&]<class T>(Tag<T>) {
            kernels::load_chunk<T>(operands[k], g.externals[k].index_space, r0 * per, r1 * per, reinterpret_cast<T*>(slot));
          });
          external_views.push_back(tile_view(slot, v.dtype, rows, per));
          break;
      }
    }
    member_views.clear();
    for (std::size_t i = 0; i < g.members.size(); ++i) {
      const GroupMember& m = g.members[i];
      const Node& n = node_at(m.position);
      const std::int64_t per = m.role == MemberRole::full ? row : 1;
      View out;
      if (m.role == MemberRole::constant) {
        out = View{base + at[i], n.meta.dtype, Shape{}, Strides{}, n.meta.wrapped_number};
      } else if (plan.materialized[static_cast<std::size_t>(m.position)]) {
        const View& whole = values[static_cast<std::size_t>(m.position)].view;
        out = tile_view(whole.data + r0 * per * static_cast<std::int64_t>(itemsize(whole.dtype)), whole.dtype, rows, per);
      } else {
        out = tile_view(base + at[i], n.meta.dtype, rows, per);
      }
      args.clear();
      for (int k : m.inputs) {
        if (k < 0) {
          args.push_back(external_views[static_cast<std::size_t>(-1 - k)]);
          continue;
        }
        const View& in = member_views[static_cast<std::size_t>(k)];
        // A one-per-row value read by a full member is broadcast along the row.
        bool widen = m.role == MemberRole::full && g.members[static_cast<std::size_t>(k)].role == MemberRole::row && row > 1;
        args.push_back(widen ? tile_view(in.data, in.dtype, rows, row, true) : in);
      }
      try {
        at_running_level(*n.op).kernel(args, out, n.op->kind == OpKind::reduction ? member_attrs[i] : n.attrs);
      } catch (const Error&) {
        raise_recorded_at(n);
      }
      member_views.push_back(out);
    }
    });
  });
}

}  // namespace detail

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
  auto bound_loop = [&](std::size_t group) -> detail::RowLoop* {
    std::unique_ptr<detail::RowLoop>& loop = scratch->loops[group];
    if (loop && loop->rebind(s, values)) return loop.get();
    loop = std::make_unique<detail::RowLoop>(plan, s, plan.groups[group], values);
    if (!loop->bind()) loop.reset();
    return loop.get();
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
      if (g.led_by_product()) {
        detail::run_group_led_by_product(plan, s, g, arena, values);
      } else if (detail::RowLoop* loop = bound_loop(static_cast<std::size_t>(step.group))) {
        row_loop_groups.add();
        loop->run(arena);
      } else {
        tile_view_groups.add();
        detail::run_group(plan, s, g, arena, values);
      }
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
