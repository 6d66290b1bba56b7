#pragma once
// A plan read from disk, checked as untrusted input. Its checksum proves nothing (whoever can
// write the cache directory can recompute it), so a plan is taken only where it runs as a
// compiled one would on the graph of its own nodes, which first_difference then matches to
// the live graph: each group's members wired to the graph's edges and sized to the group's
// index space, each step's inputs made before it, each value read outside its group made in
// full, and no two values alive at once sharing arena bytes. It asks what the executor relies
// on, not whether make_plan would have chosen these groups, so any plan that passes computes
// what the reference executor computes; any other raises lt::Error.
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <span>
#include <vector>

#include "lazytensor/compile/arena.hpp"
#include "lazytensor/compile/grouping.hpp"
#include "lazytensor/compile/plan_types.hpp"
#include "lazytensor/core/checked_size.hpp"
#include "lazytensor/ops/kernel_levels.hpp"
#include "lazytensor/ops/reduction.hpp"
#include "lazytensor/ops/registry.hpp"

namespace lt {

namespace detail {

/// What the checks need of a node's op. Fragments have a descriptor per expression; they are
/// elementwise ops, none a view. An op outside the registry (a program's own) is refused: what
/// it reads, writes or aliases is not known here, so no plan holding one can be vouched for.
struct PlanOpTraits {
  OpKind kind = OpKind::elementwise;
  bool view = false;
  const OpDesc* desc = nullptr;  // null for a fragment
};

class PlanChecker {
 public:
  explicit PlanChecker(const Plan& plan) : plan_(plan), n_(plan.nodes.size()) {}

  void check() {
    check_nodes();
    for (const PlanStep& s : plan_.steps)
      if (s.group >= 0) LT_CHECK(++steps_of_group_[idx(s.group)] == 1, "plan: group ", s.group, " runs twice");
    owner_.assign(n_, -1);
    for (std::size_t g = 0; g < plan_.groups.size(); ++g)
      if (steps_of_group_[g] > 0) check_group(plan_.groups[g], static_cast<int>(g));
    run_steps();
    check_arena();
  }

 private:
  static std::size_t idx(std::int64_t i) { return static_cast<std::size_t>(i); }
  const Meta& meta(int p) const { return plan_.nodes[idx(p)].meta; }
  std::span<const int> inputs(int p) const { return plan_.inputs[idx(p)]; }

  void check_nodes() {
    traits_.resize(n_);
    bytes_.resize(n_);
    std::int64_t elements = 0;
    for (std::size_t p = 0; p < n_; ++p) {
      const PlanNode& node = plan_.nodes[p];
      if (node.op != OpId::fragment) {
        const OpDesc* d = find_op(node.op);
        LT_CHECK(d != nullptr, "plan: node ", p, " runs op ", static_cast<int>(node.op), ", which is not in the registry");
        // Inputs come before their readers, so the first input's Meta is known here (an input
        // out of order is refused by the walk below; until then it reads as a view).
        const std::span<const int> in = inputs(static_cast<int>(p));
        const bool view = d->view != nullptr &&
                          (in.empty() || in[0] < 0 || idx(in[0]) >= p ||
                           may_alias(*d, node.meta.dtype, plan_.nodes[idx(in[0])].meta.dtype));
        traits_[p] = PlanOpTraits{d->kind, view, d};
      }
      const std::int64_t numel = checked_numel(node.meta.shape, "plan: a node's shape");
      elements = checked_add(elements, numel, "plan: the step's elements");
      bytes_[p] = checked_mul(numel, static_cast<std::int64_t>(itemsize(node.meta.dtype)), "plan: a node's bytes");
      LT_CHECK(traits_[p].kind != OpKind::leaf || inputs(static_cast<int>(p)).empty(), "plan: a leaf with inputs");
    }
    steps_of_group_.assign(plan_.groups.size(), 0);
  }

  bool elementwise(int p) const { return traits_[idx(p)].kind == OpKind::elementwise && !traits_[idx(p)].view; }

  /// Whether reduction p reduces rows of `row` elements of `in`: its dims, read from its
  /// attributes' structural words (which first_difference matches to the live node's), are
  /// trailing and span `row` elements. The words are [keepdim, dims...] (ReductionAttrs),
  /// followed by the data and float counts where the op has a correction; both readings are
  /// tried, and only a reading that
  /// makes the dims trailing and as long as the row passes. Where the other reading would
  /// give other dims, the extra or missing dim is the last and of extent 1 (the output's size
  /// is the live node's), so the rows are the same elements either way.
  bool reduces_rows(int p, const Shape& in, std::int64_t row) const {
    const OpDesc* d = traits_[idx(p)].desc;
    std::span<const std::int64_t> words = plan_.words[idx(p)];
    LT_CHECK(d != nullptr && !d->folds_special_values, "plan: a reduction of unknown attributes");
    for (std::size_t counts : {0, 2}) {
      if (words.size() < counts + 1) continue;
      const std::size_t end = words.size() - counts;
      std::span<const std::int64_t> dims = words.subspan(1, end - 1);
      bool trailing = true;
      std::int64_t spanned = 1;
      for (std::size_t k = 0; k < dims.size() && trailing; ++k) {
        trailing = dims[k] == in.rank() - static_cast<std::int64_t>(dims.size() - k);
        if (trailing) spanned *= in[static_cast<int>(dims[k])];  // a factor of in's checked count
      }
      if (trailing && (dims.empty() ? in.numel() : spanned) == row) return true;
    }
    return false;
  }

  void check_group(const FusionGroup& g, int number) {
    LT_CHECK(!g.members.empty() && g.shape.rank() > 0, "plan: group ", number, " is empty");
    const std::int64_t numel = checked_numel(g.shape, "plan: a group's shape");
    LT_CHECK(numel > 0 && g.row >= 1 && g.row <= max_group_row, "plan: group ", number, " has no rows");
    // A group of a kind with a leader has it first; a kind that reduces rows has them.
    const GroupKindInfo& kind = kind_info(g.kind);
    LT_CHECK((kind.leads != nullptr) == (g.members[0].role == MemberRole::source), "plan: group ", number,
             kind.leads != nullptr ? " has no leader" : " has a leader its kind does not take");
    LT_CHECK(kind.reduces == (g.reduced_from >= 0), "plan: group ", number, " of kind ", kind.name,
             kind.reduces ? " reduces nothing" : " reduces rows");
    if (g.reduced_from < 0) {
      LT_CHECK(g.row == 1, "plan: group ", number, " has rows but reduces nothing");
    } else {
      std::int64_t row = 1;
      for (int d = g.reduced_from; d < g.shape.rank(); ++d) row *= g.shape[d];  // <= numel: cannot wrap
      LT_CHECK(g.reduced_from < g.shape.rank() && row == g.row, "plan: group ", number, "'s row is not its reduced dims");
    }
    std::vector<char> read(g.externals.size(), 0);
    for (std::size_t i = 0; i < g.members.size(); ++i) {
      const GroupMember& m = g.members[i];
      const int p = m.position;
      if (m.role != MemberRole::constant) {
        LT_CHECK(owner_[idx(p)] < 0, "plan: node ", p, " runs in two groups");
        owner_[idx(p)] = number;
      }
      check_member(g, m, i == 0);
      LT_CHECK(m.role == MemberRole::constant ? m.inputs.empty() : m.inputs.size() == inputs(p).size(),
               "plan: member ", p, " reads other values than its node");
      for (std::size_t j = 0; j < m.inputs.size(); ++j) {
        const int k = m.inputs[j];
        if (k >= 0) {
          const GroupMember& from = g.members[idx(k)];
          LT_CHECK(from.position == inputs(p)[j] && reads_member(g, m, from), "plan: member ", p, " is wired to the wrong value");
        } else {
          const GroupExternal& e = g.externals[idx(-1 - static_cast<std::int64_t>(k))];
          LT_CHECK(e.position == inputs(p)[j] && e.index_space == index_space(g, m, e.position),
                   "plan: member ", p, " reads the wrong external");
          read[idx(-1 - static_cast<std::int64_t>(k))] = 1;
        }
      }
    }
    // An external nobody reads would still be read per tile, over an index space nothing vouches for.
    LT_CHECK(std::find(read.begin(), read.end(), 0) == read.end(), "plan: group ", number, " has an unread external");
  }

  /// What member m may be, by its role.
  void check_member(const FusionGroup& g, const GroupMember& m, bool leads) {
    const int p = m.position;
    const Meta& out = meta(p);
    switch (m.role) {
      case MemberRole::constant:
        LT_CHECK(traits_[idx(p)].desc != nullptr && inline_constant(*traits_[idx(p)].desc, out) && inputs(p).empty(),
                 "plan: member ", p, " is no constant");
        return;
      case MemberRole::source: {
        const OpDesc* d = traits_[idx(p)].desc;
        LT_CHECK(leads && d != nullptr && inputs(p).size() <= max_source_inputs && out.shape == g.shape && g.row == 1,
                 "plan: member ", p, " cannot lead its group");
        std::array<Meta, max_source_inputs> in;
        for (std::size_t k = 0; k < inputs(p).size(); ++k) in[k] = meta(inputs(p)[k]);
        const auto leads_kind = kind_info(g.kind).leads;
        LT_CHECK(leads_kind != nullptr && leads_kind(at_running_level(*d), std::span<const Meta>(in.data(), inputs(p).size()), out),
                 "plan: member ", p, " cannot lead a group of kind ", kind_info(g.kind).name);
        return;
      }
      case MemberRole::full:
        LT_CHECK(elementwise(p) && out.shape == g.shape, "plan: member ", p, " does not span its group");
        return;
      case MemberRole::row:
        LT_CHECK(kind_info(g.kind).reduces, "plan: a per-row member in a group without rows");
        if (traits_[idx(p)].kind == OpKind::reduction) {
          LT_CHECK(inputs(p).size() == 1 && meta(inputs(p)[0]).shape == g.shape, "plan: reduction ", p, " reads another space");
          LT_CHECK(reduces_rows(p, g.shape, g.row), "plan: reduction ", p, " reduces other rows than its group's");
        } else {
          LT_CHECK(elementwise(p), "plan: member ", p, " cannot run per row");
        }
        LT_CHECK(checked_numel(out.shape, "plan") == g.rows(), "plan: member ", p, " is not one value per row");
        return;
    }
    fail("plan: member ", p, " has no role");
  }

  /// The space a member reads an external in: the group's for full members and reductions;
  /// a leader's inputs whole; a per-row value's own shape.
  const Shape& index_space(const FusionGroup& g, const GroupMember& m, int external) const {
    if (m.role == MemberRole::source) return meta(external).shape;
    if (m.role == MemberRole::full || traits_[idx(m.position)].kind == OpKind::reduction) return g.shape;
    return meta(m.position).shape;
  }

  /// Whether member m may read member `from`'s tile as it is: a full value over the full
  /// space, a per-row value over rows (broadcast along a full member's rows), a constant.
  bool reads_member(const FusionGroup& g, const GroupMember& m, const GroupMember& from) const {
    if (m.role == MemberRole::source) return false;
    if (from.role == MemberRole::constant) return traits_[idx(m.position)].kind != OpKind::reduction;
    const bool from_full = from.role == MemberRole::full || from.role == MemberRole::source;
    if (m.role == MemberRole::full) return from_full || broadcasts_per_row(meta(from.position).shape, g);
    if (traits_[idx(m.position)].kind == OpKind::reduction) return from_full;
    return !from_full;
  }

  /// Walks the steps in order: every value a step reads exists whole when it runs, each node
  /// runs once, and every root is made.
  void run_steps() {
    std::vector<char> made(n_, 0), ran(n_, 0);
    for (std::size_t p = 0; p < n_; ++p) made[p] = traits_[p].kind == OpKind::leaf;
    step_of_.assign(n_, -1);
    auto run_once = [&](int p, int step) {
      LT_CHECK(!ran[idx(p)] && traits_[idx(p)].kind != OpKind::leaf, "plan: node ", p, " runs twice or is data");
      ran[idx(p)] = 1;
      step_of_[idx(p)] = step;
    };
    for (std::size_t i = 0; i < plan_.steps.size(); ++i) {
      const PlanStep& s = plan_.steps[i];
      const int step = static_cast<int>(i);
      if (s.group < 0) {
        LT_CHECK(owner_[idx(s.position)] < 0, "plan: node ", s.position, " runs alone and in a group");
        for (int q : inputs(s.position)) LT_CHECK(made[idx(q)], "plan: step ", i, " reads a value not made yet");
        run_once(s.position, step);
        made[idx(s.position)] = 1;
        continue;
      }
      const FusionGroup& g = plan_.groups[idx(s.group)];
      for (const GroupExternal& e : g.externals) LT_CHECK(made[idx(e.position)], "plan: group ", s.group, " reads a value not made yet");
      for (const GroupMember& m : g.members)
        if (m.role != MemberRole::constant) run_once(m.position, step);
      for (const GroupMember& m : g.members)
        if (m.role != MemberRole::constant && plan_.materialized[idx(m.position)]) made[idx(m.position)] = 1;
    }
    for (int r : plan_.roots) LT_CHECK(made[idx(r)], "plan: root ", r, " is never made");
  }

  /// Every value in the arena is made by a kernel in this step and dies in it, and two values
  /// alive in the same step never share bytes, except an elementwise op run alone writing
  /// over an input of its shape and dtype that it reads last.
  void check_arena() {
    constexpr int forever = std::numeric_limits<int>::max();
    std::vector<int> death(n_, -1);
    for (std::size_t p = 0; p < n_; ++p)
      for (int q : inputs(static_cast<int>(p)))
        death[idx(q)] = std::max(death[idx(q)], step_of_[p] < 0 ? forever : step_of_[p]);
    for (int r : plan_.roots) death[idx(r)] = forever;
    for (std::size_t p = n_; p-- > 0;) {  // a view keeps what it views alive
      const std::span<const int> reads = inputs(static_cast<int>(p));
      if (traits_[p].view && !reads.empty()) death[idx(reads[0])] = std::max(death[idx(reads[0])], death[p]);
    }

    struct Placed {
      int birth, death, position;
      std::int64_t offset, bytes;
    };
    std::vector<Placed> placed;
    std::int64_t room = 0;  // the arena side by side: no layout needs more
    for (std::size_t p = 0; p < n_; ++p) {
      const std::int64_t offset = plan_.arena_offset[p];
      if (offset < 0) continue;
      LT_CHECK(step_of_[p] >= 0 && plan_.materialized[p] && traits_[p].kind != OpKind::leaf && !traits_[p].view &&
                   death[p] != forever && bytes_[p] > 0 && offset % arena_alignment == 0,
               "plan: node ", p, " cannot live in the arena");
      LT_CHECK(offset <= plan_.stats.arena_bytes && bytes_[p] <= plan_.stats.arena_bytes - offset, "plan: node ", p,
               " lies outside the arena");
      room = checked_add(room, checked_add(bytes_[p], arena_alignment, "plan: the arena"), "plan: the arena");
      placed.push_back({step_of_[p], std::max(death[p], step_of_[p]), static_cast<int>(p), offset, bytes_[p]});
    }
    LT_CHECK(plan_.stats.arena_bytes <= room, "plan: an arena larger than its values");
    std::stable_sort(placed.begin(), placed.end(), [](const Placed& a, const Placed& b) { return a.birth < b.birth; });
    std::map<std::int64_t, const Placed*> live;  // by offset: disjoint byte ranges
    std::vector<const Placed*> by_birth;
    for (const Placed& v : placed) by_birth.push_back(&v);
    std::size_t released = 0;
    std::vector<const Placed*> by_death = by_birth;
    std::stable_sort(by_death.begin(), by_death.end(), [](const Placed* a, const Placed* b) { return a->death < b->death; });
    for (const Placed* v : by_birth) {
      for (; released < by_death.size() && by_death[released]->death < v->birth; ++released) {
        auto it = live.find(by_death[released]->offset);
        if (it != live.end() && it->second == by_death[released]) live.erase(it);
      }
      auto next = live.lower_bound(v->offset);
      if (next != live.end() && next->first == v->offset && in_place(*v, *next->second)) {
        live.erase(next);  // its bytes pass to v
        next = live.lower_bound(v->offset);
      }
      LT_CHECK(next == live.end() || next->first >= v->offset + v->bytes, "plan: nodes ", v->position, " and ",
               next->second->position, " share arena bytes");
      if (next != live.begin()) {
        const Placed* prev = std::prev(next)->second;
        LT_CHECK(prev->offset + prev->bytes <= v->offset, "plan: nodes ", prev->position, " and ", v->position,
                 " share arena bytes");
      }
      live.emplace(v->offset, v);
    }
  }

  /// Whether `v`, made alone by an elementwise op, may take over the bytes of `donor`.
  template <class Placed>
  bool in_place(const Placed& v, const Placed& donor) const {
    const int p = v.position, q = donor.position;
    const auto reads = inputs(p);
    return owner_[idx(p)] < 0 && elementwise(p) && donor.death == v.birth && donor.bytes == v.bytes &&
           meta(q).shape == meta(p).shape && meta(q).dtype == meta(p).dtype && std::find(reads.begin(), reads.end(), q) != reads.end();
  }

  const Plan& plan_;
  const std::size_t n_;
  std::vector<PlanOpTraits> traits_;
  std::vector<std::int64_t> bytes_;      // per node: its value's bytes
  std::vector<int> steps_of_group_;      // per group: the steps that run it (0 or 1)
  std::vector<int> owner_;               // per node: the group it runs in (constants aside), or -1
  std::vector<int> step_of_;             // per node: the step that makes it, or -1
};

}  // namespace detail

/// Whether every node of `plan` runs an op the checks know (a fragment or a registered op):
/// a plan holding a program's own op is never stored, since no loader could take it.
inline bool checkable(const Plan& plan) {
  return std::all_of(plan.nodes.begin(), plan.nodes.end(),
                     [](const PlanNode& n) { return n.op == OpId::fragment || find_op(n.op) != nullptr; });
}

/// Raises lt::Error unless `plan` runs correctly on the graph of its own nodes (see above).
/// Expects what deserialize_plan checks first: every position, index and table in range.
inline void check_plan(const Plan& plan) { detail::PlanChecker(plan).check(); }

}  // namespace lt
