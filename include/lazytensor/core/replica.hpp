#pragma once
// Who a thread is among the replicas of a run: its ordinals and the group through which its
// collectives reach the others. lt::launch (distributed/) fills one slot per lazy device it
// gives a replica; a program that launches nothing is one replica of a world of one.
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "lazytensor/core/array.hpp"
#include "lazytensor/core/device.hpp"

namespace lt {

/// How a collective combines the replicas' values.
enum class ReduceOp : std::uint8_t { sum, mean, max, min };

inline std::string_view reduce_op_name(ReduceOp op) {
  constexpr std::string_view names[] = {"sum", "mean", "max", "min"};
  return names[static_cast<std::size_t>(op)];
}

namespace detail {

enum class CollectiveKind : std::uint8_t { all_reduce, all_gather, reduce_scatter, broadcast };

inline std::string_view collective_name(CollectiveKind k) {
  constexpr std::string_view names[] = {"all_reduce", "all_gather", "reduce_scatter", "broadcast"};
  return names[static_cast<std::size_t>(k)];
}

/// One replica's part of a collective: its contiguous input and the fresh contiguous output it
/// wants written. `dim` is the gathered or scattered dim, `root` the broadcasting ordinal.
struct CollectiveCall {
  CollectiveKind kind = CollectiveKind::all_reduce;
  ReduceOp op = ReduceOp::sum;
  int dim = 0;
  int root = 0;
  View in;
  View out;
};

/// What collectives run through: the replicas of a launch. Every replica calls the same
/// collectives in the same order; a call that does not match the others', a replica that
/// fails or one that does not come raises lt::Error on every replica waiting.
class ReplicaGroup {
 public:
  virtual ~ReplicaGroup() = default;
  /// Runs `call` with the other replicas' calls of the same rank in the sequence.
  virtual void collective(int local, const CollectiveCall& call) = 0;
  /// Every replica's `bytes` (all of one size), in ordinal order, once all have come with the
  /// same `tag`.
  virtual std::vector<std::byte> exchange(int local, std::string_view tag, std::span<const std::byte> bytes) = 0;
};

/// A replica's place in its run.
struct ReplicaSlot {
  int ordinal = 0;
  int local_ordinal = 0;
  int world_size = 1;
  int local_world_size = 1;
  ReplicaGroup* group = nullptr;  // null: a world of one
};

/// Set on the replicas' threads of a reproducible launch: sums that may run over examples (the
/// reductions of reverse mode, products) are traced as fixed pairwise trees of per-example
/// terms, so that a batch split over R replicas sums in the same tree as on one replica.
inline thread_local bool reproducible_sums = false;

/// Per lazy device. Written by lt::launch before its threads start and reset after they and
/// the devices' steps have finished, so readers never race with the writes.
inline std::array<ReplicaSlot, max_lazy_devices>& replica_slots() {
  static std::array<ReplicaSlot, max_lazy_devices> slots;
  return slots;
}
inline const ReplicaSlot& replica_slot() { return replica_slots()[static_cast<std::size_t>(current_lazy_index)]; }

}  // namespace detail

/// Replicas in the run (processes × replicas per process); 1 outside lt::launch.
inline int world_size() { return detail::replica_slot().world_size; }
/// This replica's ordinal among all replicas of the run.
inline int ordinal() { return detail::replica_slot().ordinal; }
/// This replica's ordinal among the replicas of its process.
inline int local_ordinal() { return detail::replica_slot().local_ordinal; }
/// Whether this replica is ordinal 0: the one that prints, saves and logs.
inline bool is_master_ordinal() { return ordinal() == 0; }

/// Blocks until every replica has reached a rendezvous with the same tag (after finishing
/// what its device has queued); outside a launch, returns at once. Raises lt::Error when the
/// tags differ. Defined with lt::launch (distributed/definitions.hpp).
void rendezvous(std::string_view tag);

}  // namespace lt
