#pragma once
// Fusion grouping: which nodes of a schedule run together as one group, and each group's members
// and externals. Fusion groups run as one kernel over cache-sized tiles, so the values their
// members pass to one another live in tile buffers and never in memory. A group's index space is
// [rows, row]: `row` is the length of the trailing dims its reductions reduce (1 when it has none),
// and a tile is a block of whole rows. Members are elementwise ops over the full index space,
// reductions over the trailing dims, and elementwise ops over their results (one value per row):
// softmax, log_softmax and layer norm become one pass over memory. A contraction that runs tile by
// tile (a matmul) leads a group of its own kind: the elementwise ops over its full output (bias,
// activation, residual) run on each of its tiles right after the tile is computed, so its result
// reaches memory only when something outside the group reads it. Grouping looks at op kinds and
// descriptor traits only, never at a particular op.
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "lazytensor/compile/group_kinds.hpp"
#include "lazytensor/compile/plan_types.hpp"
#include "lazytensor/compile/schedule.hpp"
#include "lazytensor/core/shape.hpp"
#include "lazytensor/ops/descriptor.hpp"
#include "lazytensor/ops/kernel_levels.hpp"
#include "lazytensor/ops/reduction.hpp"
#include "lazytensor/trace/node.hpp"

namespace lt {

namespace detail {

/// The longest row a group takes: a tile of every member stays in L2, and a member's kernel
/// on a tile runs on the calling thread (see kernels::parallel_threshold).
inline constexpr std::int64_t max_group_row = 1 << 15;

inline bool fusible(const Node& n) {
  return n.op->kind == OpKind::elementwise && n.meta.shape.rank() > 0 && n.meta.shape.numel() > 0 &&
         !(n.op->view != nullptr && (n.inputs.empty() || may_alias(*n.op, n.meta.dtype, n.inputs[0]->meta.dtype)));
}
/// A constant made from attributes alone and holding one value: cheaper to recompute per tile.
inline bool inline_constant(const OpDesc& op, const Meta& meta) {
  return op.kind == OpKind::creation && op.arity == 0 && meta.shape.rank() == 0;
}
inline bool inline_constant(const Node& n) { return inline_constant(*n.op, n.meta); }
/// The kind of group that node n leads for these operands (group_kinds.hpp), if any.
inline std::optional<GroupKind> leads_group(const Node& n, const Schedule& s, std::span<const int> inputs) {
  if (inputs.size() > max_source_inputs) return std::nullopt;
  for (std::size_t k = 0; k < group_kinds.size(); ++k) {
    const GroupKindInfo& kind = group_kinds[k];
    if (kind.leads == nullptr || kind.leader_kind != n.op->kind) continue;  // most nodes: no copy of the operands' Metas
    std::array<Meta, max_source_inputs> in;
    for (std::size_t q = 0; q < inputs.size(); ++q) in[q] = s.order[static_cast<std::size_t>(inputs[q])]->meta;
    if (kind.leads(at_running_level(*n.op), std::span<const Meta>(in.data(), inputs.size()), n.meta)) return static_cast<GroupKind>(k);
  }
  return std::nullopt;
}

/// The first dim of a reduction's trailing reduced dims, or -1 when they are not trailing.
inline int trailing_reduced_from(const Node& n, const Shape& in) {
  auto dims = reduction::reduced_dims(n.attrs);
  int rank = in.rank();
  if (dims.empty()) return 0;
  for (std::size_t k = 0; k < dims.size(); ++k)
    if (dims[k] != rank - static_cast<std::int64_t>(dims.size() - k)) return -1;
  return static_cast<int>(dims[0]);
}

/// A one-per-row value of shape `v` broadcasts onto the full index space row by row: it has
/// the kept dims and size 1 in the reduced ones (a reduction's keepdim shape).
inline bool broadcasts_per_row(const Shape& v, const FusionGroup& g) {
  if (v.rank() != g.shape.rank()) return false;
  for (int d = 0; d < v.rank(); ++d)
    if (v[d] != (d < g.reduced_from ? g.shape[d] : 1)) return false;
  return true;
}

/// Builds the groups of a schedule: each node, in schedule order, joins the group of one of
/// its inputs when that group can run it, else a reduction or elementwise op starts a group.
class Grouper {
 public:
  explicit Grouper(const Schedule& s)
      : group_of_(s.order.size(), -1), role_(s.order.size(), MemberRole::full), s_(s), last_full_reader_(s.order.size(), -1) {}

  void add(int p) {
    place(p);
    // Whatever reads a group's value from outside runs after the group: it may run no later.
    for (int q : inputs(p))
      if (int g = group_of_[idx(q)]; g >= 0 && g != group_of_[idx(p)]) read_outside_[idx(g)] = 1;
  }

  /// Renumbers the groups without those merged into others, their members in schedule order.
  void drop_merged() {
    std::vector<int> number(groups_.size(), -1);
    std::size_t kept = 0;
    for (std::size_t g = 0; g < groups_.size(); ++g) {
      if (merged_into_[g] >= 0) continue;
      number[g] = static_cast<int>(kept);
      std::sort(members_[g].begin(), members_[g].end());
      if (kept != g) {
        groups_[kept] = std::move(groups_[g]);
        members_[kept] = std::move(members_[g]);
        first_[kept] = first_[g];
        run_at_[kept] = run_at_[g];
      }
      ++kept;
    }
    groups_.resize(kept), members_.resize(kept), first_.resize(kept), run_at_.resize(kept);
    for (int& g : group_of_)
      if (g >= 0) g = number[idx(g)];
  }

  std::vector<FusionGroup> groups_;
  std::vector<std::vector<int>> members_;  // per group: positions, schedule order (after drop_merged)
  std::vector<int> first_;                 // per group: its first member's position
  std::vector<int> run_at_;                // per group: the position at which it runs
  std::vector<int> group_of_;
  std::vector<MemberRole> role_;

 private:
  void place(int p) {
    const Node& node = at(p);
    if (fusible(node)) {
      // A group that can run it where the group runs now, else one that can run later.
      for (bool later : {false, true})
        for (int q : inputs(p))
          if (int g = group_of_[idx(q)]; g >= 0 && try_join_elementwise(p, g, later)) {
            // The groups of its other inputs, which nothing else has read, come along: the
            // terms of a gradient sum, made in groups of their own, then run as one.
            for (int r : inputs(p)) {
              // The smaller group moves: a sum accumulated over a long loop stays linear.
              const int h = group_of_[idx(r)], at = group_of_[idx(p)];
              if (h < 0 || h == at) continue;
              if (members_[idx(h)].size() > members_[idx(at)].size() && can_merge(at, h)) merge(at, h);
              else if (can_merge(h, at)) merge(h, at);
            }
            return;
          }
      start(p, node.meta.shape, MemberRole::full);
    } else if (std::optional<GroupKind> kind = leads_group(node, s_, inputs(p))) {
      start(p, node.meta.shape, MemberRole::source, *kind);
    } else if (node.op->kind == OpKind::reduction) {
      const Node& in = at(inputs(p)[0]);
      int from = trailing_reduced_from(node, in.meta.shape);
      std::int64_t row = 1;
      for (int d = std::max(from, 0); d < in.meta.shape.rank(); ++d) row *= in.meta.shape[d];
      if (from < 0 || row < 1 || row > max_group_row || in.meta.shape.rank() == 0) return;
      // It joins the group that makes its input, or one that already reads that input in
      // full (layer norm's mean and variance of x), when that group's rows are its rows.
      int q = inputs(p)[0], g = role_[idx(q)] == MemberRole::full ? group_of_[idx(q)] : -1;
      if (g < 0 && last_full_reader_[idx(q)] >= 0) g = live(last_full_reader_[idx(q)]);
      // A group with a leader runs on its leader's tiles, not on whole rows: it takes no reduction.
      if (g >= 0 && !led(g) && groups_[idx(g)].shape == in.meta.shape &&
          (groups_[idx(g)].reduced_from < 0 || groups_[idx(g)].reduced_from == from)) {
        join(p, g, MemberRole::row);
      } else {
        g = start(p, in.meta.shape, MemberRole::row);
      }
      groups_[idx(g)].kind = GroupKind::rows;
      groups_[idx(g)].row = row;
      groups_[idx(g)].reduced_from = from;
    }
  }

  static std::size_t idx(int i) { return static_cast<std::size_t>(i); }
  const Node& at(int p) const { return *s_.order[idx(p)]; }
  std::span<const int> inputs(int p) const { return s_.inputs[idx(p)]; }

  /// Whether group g has a leader whose tiles it runs on.
  bool led(int g) const { return kind_info(groups_[idx(g)].kind).leads != nullptr; }

  int start(int p, const Shape& shape, MemberRole role, GroupKind kind = GroupKind::map) {
    int g = static_cast<int>(groups_.size());
    groups_.push_back({kind, shape, 1, -1, {}, {}});
    members_.emplace_back();
    first_.push_back(p);
    run_at_.push_back(p);
    read_outside_.push_back(0);
    only_full_.push_back(1);
    merged_into_.push_back(-1);
    join(p, g, role);
    return g;
  }
  void join(int p, int g, MemberRole role) {
    if (role != MemberRole::full) only_full_[idx(g)] = 0;
    group_of_[idx(p)] = g;
    role_[idx(p)] = role;
    members_[idx(g)].push_back(p);
    // What it reads from outside over the full index space, other reductions may share (a
    // product reads its inputs whole, over their own shapes).
    if (role == MemberRole::full || at(p).op->kind == OpKind::reduction)
      for (int q : inputs(p))
        if (group_of_[idx(q)] != g) last_full_reader_[idx(q)] = g;
  }

  /// An input from outside `g` must be ready when the group runs: device data, an inline
  /// constant, or a value computed before the group's step.
  bool ready_before(int q, int g) const {
    const Node& in = at(q);
    return q < run_at_[idx(g)] || in.is_data() || inline_constant(in);
  }

  /// `may_wait`: the group may run later, at p, where an input of p is computed after it.
  bool try_join_elementwise(int p, int g, bool may_wait) {
    const FusionGroup& group = groups_[idx(g)];
    const Shape& shape = at(p).meta.shape;
    // Full when it spans the group's index space; one per row when it has the shape of a
    // one-per-row input it reads.
    bool full = shape == group.shape, row = false;
    for (int q : inputs(p))
      row = row || (group_of_[idx(q)] == g && role_[idx(q)] == MemberRole::row && at(q).meta.shape == shape);
    if (!full && !row) return false;
    // An input computed after the group's step moves the step to p, unless something outside
    // the group has read one of its values already (the autograd sum of a gradient's terms,
    // each made where its operands are ready, joins this way).
    bool later = false;
    for (int q : inputs(p)) {
      if (group_of_[idx(q)] != g) {
        later = later || !ready_before(q, g);
        if (later && (!may_wait || read_outside_[idx(g)])) return false;
      } else if (role_[idx(q)] == MemberRole::row) {
        if (full ? !broadcasts_per_row(at(q).meta.shape, group) : at(q).meta.shape != shape) return false;
      } else if (!full) {
        return false;  // a full value does not fit in one value per row
      }
    }
    join(p, g, full ? MemberRole::full : MemberRole::row);
    if (later) run_at_[idx(g)] = p;
    return true;
  }

  /// Whether group h can be merged into g: elementwise members over g's index space only (after
  /// g's leader, where it has one), none read outside h yet, each reading g's one-per-row values as they broadcast row by
  /// row, and g free to run as late as h must.
  bool can_merge(int h, int g) const {
    // A group with a leader keeps it first: it takes members that come after it only.
    if (read_outside_[idx(h)] || groups_[idx(h)].reduced_from >= 0 || groups_[idx(h)].shape != groups_[idx(g)].shape ||
        (led(g) && first_[idx(h)] < first_[idx(g)]))
      return false;
    for (int m : members_[idx(h)])
      for (int q : inputs(m))
        if (group_of_[idx(q)] == g && role_[idx(q)] == MemberRole::row && !broadcasts_per_row(at(q).meta.shape, groups_[idx(g)]))
          return false;
    return only_full_[idx(h)] && (run_at_[idx(h)] <= run_at_[idx(g)] || !read_outside_[idx(g)]);
  }
  /// Moves h's members into g (their schedule order is restored in drop_merged).
  void merge(int h, int g) {
    for (int m : members_[idx(h)]) group_of_[idx(m)] = g;
    members_[idx(g)].insert(members_[idx(g)].end(), members_[idx(h)].begin(), members_[idx(h)].end());
    members_[idx(h)] = {};
    first_[idx(g)] = std::min(first_[idx(g)], first_[idx(h)]);
    run_at_[idx(g)] = std::max(run_at_[idx(g)], run_at_[idx(h)]);
    merged_into_[idx(h)] = g;
  }
  /// The group that group g's members are in now.
  int live(int g) const {
    while (merged_into_[idx(g)] >= 0) g = merged_into_[idx(g)];
    return g;
  }

  const Schedule& s_;
  std::vector<int> merged_into_;  // per group: the group it was merged into, or -1
  std::vector<int> last_full_reader_;  // per position: the last group reading it in full from outside, or -1
  std::vector<char> read_outside_;     // per group: whether a node outside it read one of its values
  std::vector<char> only_full_;        // per group: whether every member is elementwise over its index space
};

/// Position -> member and position -> externals of the group being filled. Made once per plan
/// and cleared per group: a graph of small groups (tens of thousands of them) would otherwise
/// build and free a hash map per group, with an allocation per member.
class GroupLookup {
 public:
  explicit GroupLookup(std::size_t positions) : member_(positions, -1), first_external_(positions, -1) {}
  /// Forgets the last group's entries, touching only those.
  void clear() {
    for (int p : touched_) member_[idx(p)] = first_external_[idx(p)] = -1;
    touched_.clear();
    next_external_.clear();
  }
  int member(int p) const { return member_[idx(p)]; }
  void add_member(int p, int index) {
    touched_.push_back(p);
    member_[idx(p)] = index;
  }
  /// The external of `group` reading position p over `index_space`, added when missing.
  int external(FusionGroup& group, int p, const Shape& index_space) {
    for (int k = first_external_[idx(p)]; k >= 0; k = next_external_[idx(k)])
      if (group.externals[idx(k)].index_space == index_space) return k;
    group.externals.push_back({p, index_space});
    const int k = static_cast<int>(group.externals.size()) - 1;
    next_external_.push_back(first_external_[idx(p)]);
    first_external_[idx(p)] = k;
    touched_.push_back(p);
    return k;
  }

 private:
  static std::size_t idx(int i) { return static_cast<std::size_t>(i); }
  std::vector<int> member_, first_external_;  // per position; -1: none
  std::vector<int> next_external_;            // per external: the next of the same position
  std::vector<int> touched_;
};

/// Members in schedule order, with the inline constants they read, and the externals. Reads
/// ops and shapes from the plan's per-position lists (`ops`, `nodes`), not from the nodes.
inline void fill_group(const Schedule& s, std::span<const OpDesc* const> ops, std::span<const PlanNode> nodes,
                       FusionGroup& group, std::span<const int> positions, std::span<const MemberRole> role,
                       GroupLookup& lookup) {
  auto idx = [](int i) { return static_cast<std::size_t>(i); };
  lookup.clear();
  group.members.reserve(positions.size());
  // Members are made in place and their inputs filled there: a member built aside and moved in
  // is read back with wide loads over the narrow stores that filled its inputs.
  auto add_member = [&](int position, MemberRole r) -> GroupMember& {
    lookup.add_member(position, static_cast<int>(group.members.size()));
    GroupMember& m = group.members.emplace_back();
    m.position = position;
    m.role = r;
    return m;
  };
  for (int p : positions) {
    const OpDesc& op = *ops[idx(p)];
    MemberRole r = role[idx(p)];
    // The inline constants it reads join first, in input order, so that the member, made
    // next, stays where it is while its inputs are filled.
    if (r != MemberRole::source)
      for (int q : s.inputs[idx(p)])
        if (lookup.member(q) < 0 && inline_constant(*ops[idx(q)], nodes[idx(q)].meta)) add_member(q, MemberRole::constant);
    // A reduction reads the full index space; a leader its inputs whole; other members read
    // in their own index space.
    const Shape& reads_in = op.kind == OpKind::reduction || r == MemberRole::full ? group.shape : nodes[idx(p)].meta.shape;
    GroupMember& m = add_member(p, r);
    for (int q : s.inputs[idx(p)]) {
      if (r == MemberRole::source) {
        m.inputs.push_back(-1 - lookup.external(group, q, nodes[idx(q)].meta.shape));
        continue;
      }
      const int k = lookup.member(q);
      m.inputs.push_back(k >= 0 ? k : -1 - lookup.external(group, q, reads_in));
    }
  }
}
}  // namespace detail

}  // namespace lt
