#pragma once
// The Plan and the fusion groups it holds: what a compiled step graph is, as plain data.
#include <cstdint>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "lazytensor/compile/group_kinds.hpp"
#include "lazytensor/compile/plan_stats.hpp"
#include "lazytensor/compile/schedule.hpp"
#include "lazytensor/core/hash.hpp"
#include "lazytensor/core/shape.hpp"
#include "lazytensor/core/small_vector.hpp"
#include "lazytensor/core/spin_lock.hpp"
#include "lazytensor/ops/descriptor.hpp"

namespace lt {

/// What a group member computes per tile.
enum class MemberRole : std::uint8_t {
  full,      // rows x row values
  row,       // one value per row: a reduction, or elementwise ops on reductions' results
  constant,  // a zero-dim constant (a C++ scalar operand): one value per tile
  source,    // leads a group of a kind that has a leader (always member 0): makes the tiles the
             // others run on (a tiled contraction's output), reading its inputs whole
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
  GroupKind kind = GroupKind::map;
  Shape shape;            // the full index space
  std::int64_t row = 1;   // elements per row: the product of the reduced trailing dims
  int reduced_from = -1;  // the first reduced dim; -1 while the group has no reduction
  std::vector<GroupMember> members;
  std::vector<GroupExternal> externals;

  std::int64_t rows() const { return shape.numel() / row; }
};

struct PlanStep {
  int position;    // the node, or the group's first member
  int group = -1;  // < 0: the node runs alone
};

/// One node of the graph a plan was compiled for: what a graph must have in that place to run
/// the plan. Data (leaves' values, scalar values, seeds) is not part of it.
struct PlanNode {
  OpId op;
  Meta meta;
  // The compiled node's attribute token (trace/node.hpp): a node of a later graph with the same
  // token has the same attribute structure, which first_difference then need not walk. Not
  // saved: a plan loaded from disk checks by structure alone.
  std::uint64_t attrs_token = 0;
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

}  // namespace lt
