#pragma once
// From a step graph to a Plan: the schedule, cut into steps. Fusion groups run as one kernel
// over cache-sized tiles, so the values their members pass to one another live in tile
// buffers and never in memory. A group's index space is [rows, row]: `row` is the length of
// the trailing dims its reductions reduce (1 when it has none), and a tile is a block of whole
// rows. Members are elementwise ops over the full index space, reductions over the trailing
// dims, and elementwise ops over their results (one value per row): softmax, log_softmax and
// layer norm become one pass over memory. A contraction that runs tile by tile (a matmul) leads
// a group of its own kind: the elementwise ops over its full output (bias, activation,
// residual) run on each of its tiles right after the tile is computed, so its result reaches
// memory only when something outside the group reads it. Grouping looks at op kinds and
// descriptor traits only, never at a particular op.
#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <memory>
#include <mutex>
#include <span>
#include <vector>

#include "lazytensor/compile/arena.hpp"
#include "lazytensor/compile/schedule.hpp"
#include "lazytensor/core/small_vector.hpp"
#include "lazytensor/core/spin_lock.hpp"
#include "lazytensor/ops/attrs_key.hpp"
#include "lazytensor/ops/reduction.hpp"
#include "lazytensor/ops/tiled_product.hpp"

namespace lt {

/// What a group member computes per tile.
enum class MemberRole : std::uint8_t {
  full,      // rows x row values
  row,       // one value per row: a reduction, or elementwise ops on reductions' results
  constant,  // a zero-dim constant (a C++ scalar operand): one value per tile
  product,   // a tiled contraction leading its group (always member 0): reads its inputs whole
};

/// A node run inside a fusion group, on tile-sized views.
struct GroupMember {
  int position;  // in schedule order
  MemberRole role;
  SmallVector<int, 4> inputs;  // per input: >= 0 a member index; < 0 external number -1 - k
};

/// A value from outside the group, read over the index space of its readers: the group's
/// shape for full members, the reader's shape for one-per-row members.
struct GroupExternal {
  int position;
  Shape index_space;
};

struct FusionGroup {
  Shape shape;            // the full index space
  std::int64_t row = 1;   // elements per row: the product of the reduced trailing dims
  int reduced_from = -1;  // the first reduced dim; -1 while the group has no reduction
  std::vector<GroupMember> members;
  std::vector<GroupExternal> externals;

  std::int64_t rows() const { return shape.numel() / row; }
  /// Led by a tiled product: the other members run on each tile of its output.
  bool led_by_product() const { return !members.empty() && members[0].role == MemberRole::product; }
};

struct PlanStep {
  int position;    // the node, or the group's first member
  int group = -1;  // < 0: the node runs alone
};

/// What a plan does, for tests and metrics.
struct PlanStats {
  int kernels = 0;        // kernel launches per run: groups and nodes run alone, views aside
  int views = 0;          // view ops run alone: aliases of their input (a copy only where its layout forbids)
  int fused_groups = 0;   // groups of two or more ops
  int fused_ops = 0;      // ops inside those groups (constants not counted)
  int row_groups = 0;     // groups holding a reduction with its producers and consumers
  int gemm_epilogues = 0; // groups led by a product, running elementwise ops on its tiles
  std::int64_t intermediate_bytes = 0;  // values made in full (not views) and consumed within the step
  std::int64_t arena_bytes = 0;  // the one block those values share, placed by their lives
};

/// One node of the graph a plan was compiled for: what a graph must have in that place to run
/// the plan. Data (leaves' values, scalar values, seeds) is not part of it.
struct PlanNode {
  OpId op;
  Meta meta;
};

/// A compiled step graph. It refers to positions in the graph's schedule, never to its nodes:
/// any graph that fits it (same structure, other data) runs it with its own nodes.
/// What a run of a plan leaves for its next run (the executor keeps its bound group loops
/// and its value table there). One run holds it at a time: a run on another thread meanwhile
/// finds none and makes its own. Never saved with the plan.
class PlanRunState {
 public:
  std::shared_ptr<void> take() {
    std::lock_guard lock(mu_);
    return std::move(kept_);
  }
  void keep(std::shared_ptr<void> state) {
    std::lock_guard lock(mu_);
    kept_ = std::move(state);
  }

 private:
  SpinLock mu_;
  std::shared_ptr<void> kept_;
};

struct Plan {
  hash_t key = 0;  // the schedule key it was compiled for
  std::vector<PlanNode> nodes;
  FlatLists<std::int64_t> words;  // per position: its attributes' structure (ops/attrs_key.hpp)
  // The attributes of the compiled graph's nodes whose structure is not simply their ints, by
  // position, in position order. A loop's later graphs mostly carry the same values, and equal
  // attributes have the same structure, which first_difference then need not walk. Not saved:
  // a plan loaded from disk checks by structure alone.
  std::vector<std::pair<int, Attrs>> compiled_attrs;
  Adjacency inputs;
  std::vector<int> roots;
  std::vector<PlanStep> steps;
  std::vector<FusionGroup> groups;
  std::vector<char> materialized;  // per position: the value is made as a full array
  std::vector<std::int64_t> arena_offset;  // per position: its bytes in the arena, or -1
  PlanStats stats;
  std::int64_t value_elements = 0;  // the elements of every value, summed: the step's size
  // Shared by copies of the plan, which run the same steps.
  std::shared_ptr<PlanRunState> run_state = std::make_shared<PlanRunState>();
};

namespace detail {

/// The longest row a group takes: a tile of every member stays in L2, and a member's kernel
/// on a tile runs on the calling thread (see kernels::parallel_threshold).
inline constexpr std::int64_t max_group_row = 1 << 15;

inline bool fusible(const Node& n) {
  return n.op->kind == OpKind::elementwise && n.op->view == nullptr && n.meta.shape.rank() > 0 &&
         n.meta.shape.numel() > 0;
}
/// A constant made from attributes alone and holding one value: cheaper to recompute per tile.
inline bool inline_constant(const OpDesc& op, const Meta& meta) {
  return op.kind == OpKind::creation && op.arity == 0 && meta.shape.rank() == 0;
}
inline bool inline_constant(const Node& n) { return inline_constant(*n.op, n.meta); }
/// A contraction that can hand its output over tile by tile, for these operands.
inline bool tiled_product(const Node& n, const Schedule& s, std::span<const int> inputs) {
  if (n.op->kind != OpKind::contraction || n.op->tiled == nullptr || n.meta.shape.rank() == 0 ||
      n.meta.shape.numel() == 0 || inputs.size() > 4)
    return false;
  std::array<Meta, 4> in;
  for (std::size_t k = 0; k < inputs.size(); ++k) in[k] = s.order[static_cast<std::size_t>(inputs[k])]->meta;
  return n.op->tiled->fits(std::span<const Meta>(in.data(), inputs.size()), n.meta);
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
    } else if (tiled_product(node, s_, inputs(p))) {
      start(p, node.meta.shape, MemberRole::product);
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
      // A product's tiles are blocks of rows and columns, not whole rows: it takes no reduction.
      if (g >= 0 && role_[idx(first_[idx(g)])] != MemberRole::product && groups_[idx(g)].shape == in.meta.shape &&
          (groups_[idx(g)].reduced_from < 0 || groups_[idx(g)].reduced_from == from)) {
        join(p, g, MemberRole::row);
      } else {
        g = start(p, in.meta.shape, MemberRole::row);
      }
      groups_[idx(g)].row = row;
      groups_[idx(g)].reduced_from = from;
    }
  }

  static std::size_t idx(int i) { return static_cast<std::size_t>(i); }
  const Node& at(int p) const { return *s_.order[idx(p)]; }
  std::span<const int> inputs(int p) const { return s_.inputs[idx(p)]; }

  int start(int p, const Shape& shape, MemberRole role) {
    int g = static_cast<int>(groups_.size());
    groups_.push_back({shape, 1, -1, {}, {}});
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

  /// Whether group h can be merged into g: elementwise members over g's index space only,
  /// none read outside h yet, and g free to run as late as h must.
  bool can_merge(int h, int g) const {
    if (read_outside_[idx(h)] || groups_[idx(h)].reduced_from >= 0 || groups_[idx(h)].shape != groups_[idx(g)].shape ||
        role_[idx(first_[idx(g)])] == MemberRole::product)
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
    if (r != MemberRole::product)
      for (int q : s.inputs[idx(p)])
        if (lookup.member(q) < 0 && inline_constant(*ops[idx(q)], nodes[idx(q)].meta)) add_member(q, MemberRole::constant);
    // A reduction reads the full index space; a product its inputs whole; other members read
    // in their own index space.
    const Shape& reads_in = op.kind == OpKind::reduction || r == MemberRole::full ? group.shape : nodes[idx(p)].meta.shape;
    GroupMember& m = add_member(p, r);
    for (int q : s.inputs[idx(p)]) {
      if (r == MemberRole::product) {
        m.inputs.push_back(-1 - lookup.external(group, q, nodes[idx(q)].meta.shape));
        continue;
      }
      const int k = lookup.member(q);
      m.inputs.push_back(k >= 0 ? k : -1 - lookup.external(group, q, reads_in));
    }
  }
}

/// Places every intermediate in the plan's arena: values made by a kernel (not views), read
/// within the step only. A value lives until the last step that reads it or a view of it.
/// `ops`: per position, its node's op; shapes and dtypes come from plan.nodes (a large graph's
/// nodes are out of cache: each pass over them would miss on every one).
inline void plan_arena(Plan& plan, const Schedule& s, std::span<const OpDesc* const> ops, std::span<const int> group_of,
                       const Adjacency& consumers) {
  const auto n = static_cast<int>(s.order.size());
  auto idx = [](int i) { return static_cast<std::size_t>(i); };
  constexpr int forever = std::numeric_limits<int>::max();
  std::vector<int> step_of(idx(n), -1), first_member_step(plan.groups.size(), -1);
  for (std::size_t i = 0; i < plan.steps.size(); ++i) {
    if (plan.steps[i].group >= 0) first_member_step[idx(plan.steps[i].group)] = static_cast<int>(i);
    else step_of[idx(plan.steps[i].position)] = static_cast<int>(i);
  }
  for (int p = 0; p < n; ++p)
    if (group_of[idx(p)] >= 0) step_of[idx(p)] = first_member_step[idx(group_of[idx(p)])];
  std::vector<int> death(idx(n), -1);
  for (int p = 0; p < n; ++p)
    for (int c : consumers[idx(p)]) death[idx(p)] = std::max(death[idx(p)], step_of[idx(c)] < 0 ? forever : step_of[idx(c)]);
  for (int r : s.roots) death[idx(r)] = forever;
  for (int p = n - 1; p >= 0; --p)  // a view keeps what it views alive
    if (ops[idx(p)]->view != nullptr && !s.inputs[idx(p)].empty()) {
      int q = s.inputs[idx(p)][0];
      death[idx(q)] = std::max(death[idx(q)], death[idx(p)]);
    }

  std::vector<ArenaValue> values;
  std::vector<int> position_of;
  std::vector<int> value_of(idx(n), -1);
  std::vector<int> placed;  // positions by the step that makes them, schedule order within one
  for (int p = 0; p < n; ++p) {
    const OpDesc& op = *ops[idx(p)];
    if (step_of[idx(p)] >= 0 && plan.materialized[idx(p)] && op.kind != OpKind::leaf && op.view == nullptr &&
        death[idx(p)] != forever && plan.nodes[idx(p)].meta.shape.numel() > 0)
      placed.push_back(p);
  }
  std::stable_sort(placed.begin(), placed.end(), [&](int a, int b) { return step_of[idx(a)] < step_of[idx(b)]; });
  for (int p : placed) {
      const Meta& meta = plan.nodes[idx(p)].meta;
      const int i = step_of[idx(p)];
      ArenaValue v{i, std::max(death[idx(p)], i), meta.shape.numel() * static_cast<std::int64_t>(itemsize(meta.dtype))};
      // An elementwise op run alone reads each element before it writes that element: it may
      // write over an input of its own shape and dtype that it is the last to read.
      if (group_of[idx(p)] < 0 && ops[idx(p)]->kind == OpKind::elementwise)
        for (int q : s.inputs[idx(p)])
          if (value_of[idx(q)] >= 0 && death[idx(q)] == i && plan.nodes[idx(q)].meta.shape == meta.shape &&
              plan.nodes[idx(q)].meta.dtype == meta.dtype)
            v.in_place_of = value_of[idx(q)];
      value_of[idx(p)] = static_cast<int>(values.size());
      values.push_back(v);
      position_of.push_back(p);
    }
  ArenaLayout layout = place_in_arena(values);
  plan.arena_offset.assign(idx(n), -1);
  for (std::size_t k = 0; k < values.size(); ++k) plan.arena_offset[idx(position_of[k])] = layout.offsets[k];
  plan.stats.arena_bytes = layout.bytes;
}

}  // namespace detail

/// Groups the schedule's nodes and orders the steps.
inline Plan make_plan(const Schedule& s) {
  Plan plan;
  const auto n = static_cast<int>(s.order.size());
  auto idx = [](int i) { return static_cast<std::size_t>(i); };
  plan.key = s.key;
  plan.nodes.reserve(idx(n));
  plan.words.offsets.reserve(idx(n) + 1);
  std::vector<const OpDesc*> ops;  // per position; read with plan.nodes in place of the nodes
  ops.reserve(idx(n));
  // One pass over the nodes, in order, fetching ahead: a large graph's nodes are out of cache.
  // A node joins its group here, while it is in cache; the groups read earlier nodes only.
  detail::Grouper grouper(s);
  constexpr std::size_t ahead = 12;
  for (std::size_t p = 0; p < s.order.size(); ++p) {
    if (p + ahead < s.order.size()) prefetch_whole_node(s.order[p + ahead]);
    const Node* node = s.order[p];
    ops.push_back(node->op);
    // Filled in place: a PlanNode built aside and copied in is read back with wide loads over
    // the narrow stores that made it, a stall per node.
    PlanNode& made = plan.nodes.emplace_back();
    made.op = node->op->id;
    made.meta = node->meta;
    plan.value_elements += node->meta.shape.numel();
    if (!node->is_data()) append_structural_words(*node->op, node->attrs, plan.words.flat);
    plan.words.close_list();
    if (!node->is_data() && !all_structural(*node->op, node->attrs))
      plan.compiled_attrs.emplace_back(static_cast<int>(p), node->attrs);
    grouper.add(static_cast<int>(p));
  }
  plan.inputs = s.inputs;
  plan.roots = s.roots;
  const Adjacency consumers = s.inputs.transposed();
  std::vector<char> is_root(idx(n), 0);
  for (int r : s.roots) is_root[idx(r)] = 1;

  grouper.drop_merged();
  std::vector<int>& group_of = grouper.group_of_;
  // A group of one op gains nothing from tiles: that op runs alone.
  for (const auto& members : grouper.members_)
    if (members.size() == 1) group_of[idx(members[0])] = -1;
  plan.groups = std::move(grouper.groups_);
  detail::GroupLookup lookup(idx(n));
  for (std::size_t g = 0; g < plan.groups.size(); ++g)
    if (grouper.members_[g].size() > 1) detail::fill_group(s, ops, plan.nodes, plan.groups[g], grouper.members_[g], grouper.role_, lookup);

  // A value is made in full when something outside its group reads it (or it is a root).
  plan.materialized.assign(idx(n), 0);
  for (int p = 0; p < n; ++p) {
    const OpDesc& op = *ops[idx(p)];
    if (op.kind == OpKind::leaf) continue;
    bool inlined = detail::inline_constant(op, plan.nodes[idx(p)].meta);
    int g = group_of[idx(p)];
    bool outside_reader = is_root[idx(p)] != 0;
    // An inline constant is recomputed in the groups that read it, except by a product, which
    // reads its inputs whole.
    for (int c : consumers[idx(p)])
      outside_reader = outside_reader || (inlined ? group_of[idx(c)] < 0 || grouper.role_[idx(c)] == MemberRole::product
                                                  : group_of[idx(c)] != g);
    plan.materialized[idx(p)] = (g < 0 && !inlined) || outside_reader;
  }

  for (int p = 0; p < n; ++p) {
    const OpDesc& op = *ops[idx(p)];
    int g = group_of[idx(p)];
    if (op.kind == OpKind::leaf || (g < 0 && !plan.materialized[idx(p)])) continue;
    if (g >= 0 && grouper.run_at_[idx(g)] != p) continue;
    plan.steps.push_back({p, g});
    const bool view = g < 0 && op.view != nullptr;
    ++(view ? plan.stats.views : plan.stats.kernels);
    if (g >= 0) {
      ++plan.stats.fused_groups;
      plan.stats.row_groups += plan.groups[idx(g)].reduced_from >= 0;
      plan.stats.gemm_epilogues += plan.groups[idx(g)].led_by_product();
      plan.stats.fused_ops += static_cast<int>(grouper.members_[idx(g)].size());
    }
  }
  detail::plan_arena(plan, s, ops, group_of, consumers);
  for (int p = 0; p < n; ++p) {
    const Meta& meta = plan.nodes[idx(p)].meta;
    if (plan.materialized[idx(p)] && !is_root[idx(p)] && ops[idx(p)]->view == nullptr)
      plan.stats.intermediate_bytes += meta.shape.numel() * static_cast<std::int64_t>(itemsize(meta.dtype));
  }
  return plan;
}

/// Plans the graph of `roots`.
inline Plan make_plan(std::span<const NodePtr> roots) { return make_plan(make_schedule(roots)); }

/// The first position at which graph `s` differs from the graph `plan` was compiled for, or
/// -1 when `s` fits the plan. Data leaves match on shape and dtype; the rest also on op,
/// attribute structure and inputs.
inline int first_difference(const Plan& plan, const Schedule& s) {
  // Attributes equal to the compiled node's have its structure (a float scalar's structure is
  // whether it is 0, 1 or another value, which equal values share).
  auto kept = plan.compiled_attrs.begin();
  auto same_attrs = [&](std::size_t p, const Node& node) {
    while (kept != plan.compiled_attrs.end() && static_cast<std::size_t>(kept->first) < p) ++kept;
    if (kept != plan.compiled_attrs.end() && static_cast<std::size_t>(kept->first) == p && kept->second == node.attrs)
      return true;
    return same_structure(*node.op, node.attrs, plan.words[p]);
  };
  const std::size_t n = std::min(plan.nodes.size(), s.order.size());
  for (std::size_t p = 0; p < n; ++p) {
    const Node& node = *s.order[p];
    const PlanNode& want = plan.nodes[p];
    if (node.op->id != want.op || node.meta.shape != want.meta.shape || node.meta.dtype != want.meta.dtype ||
        node.meta.wrapped_number != want.meta.wrapped_number || !std::ranges::equal(s.inputs[p], plan.inputs[p]) ||
        (!node.is_data() && !same_attrs(p, node)))
      return static_cast<int>(p);
  }
  if (plan.nodes.size() != s.order.size()) return static_cast<int>(n);
  return s.roots == plan.roots ? -1 : static_cast<int>(n == 0 ? 0 : n - 1);
}

}  // namespace lt
