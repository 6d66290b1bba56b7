#pragma once
// The RowLoop class: its tile sizes, its state, and its functions' declarations, with their
// comments; row_loop_bind.hpp, row_loop_fuse.hpp, row_loop_run.hpp and row_loop_sources.hpp
// define the functions.
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "lazytensor/compile/plan_types.hpp"
#include "lazytensor/compile/schedule.hpp"
#include "lazytensor/core/array.hpp"
#include "lazytensor/core/buffer.hpp"
#include "lazytensor/core/dtype.hpp"
#include "lazytensor/ops/descriptor.hpp"
#include "lazytensor/ops/execute.hpp"
#include "lazytensor/ops/kernels/strided.hpp"
#include "lazytensor/ops/tiled_product.hpp"
#include "lazytensor/trace/node.hpp"

namespace lt::detail {

// Elements per tile, by group kind (compile/group_kinds.hpp):
// - a group that reduces rows: whole rows, about 8192 values of each member, so that short rows
//   share a tile and its calls (measured in benchmarks/README.md);
// - a group that only maps: 384. Members read their operands one after another; in short tiles
//   the values passed on stay in L1, and the tile two ahead, fetched in shares while this one
//   runs, keeps every operand's stream in flight at once, as one fused loop does. Shorter tiles
//   cost more calls than they save; longer ones leave L1 (measured in benchmarks/README.md).
//   A group that reads and writes only bf16 (2-byte) values runs tiles of twice the elements,
//   the same bytes, and fetches none ahead: its one-pass bf16 ops spend longer per byte, the
//   hardware prefetchers keep up, and prefetching cost it a quarter (benchmarks/README.md);
// - a product's epilogue: 2048. The product's tile is in cache already, so a tile is longer
//   than a map's, and a call of each member covers more of it.
inline constexpr std::int64_t map_loop_prefetch_tiles = 2;
/// Elements of one-per-row values spread over their rows for one call of a member: calls
/// on W4's batch-norm rows of 144 cost more than their arithmetic.
inline constexpr std::int64_t row_loop_spread_elements = 1024;
/// Elements per parallel block: enough work to amortise a task.
inline constexpr std::int64_t row_loop_block_elements = 32768;

/// While set, loops bound from then on run every member that computes on views of each tile,
/// as a member with no bound form for its operands runs: to test that path on every op, and to
/// compare the two paths' bits.
inline std::atomic<bool> members_on_views{false};

class RowLoop {
 public:
  RowLoop(const Plan& plan, const Schedule& s, const FusionGroup& g, std::vector<Array>& values)
      : plan_(plan), s_(&s), g_(g), values_(&values) {}

  /// Binds every member to its operands: its bound kernel, or where it has no bound form for
  /// them, its kernel run on views of each tile (nothing has run).
  void bind();

  /// Binds the loop, bound for an earlier run of the same plan, to graph `s` (which matches
  /// the plan) and its `values`. Only what may differ between such graphs is bound again: the
  /// externals' places, and the kernels of members whose attributes now hold other data (a
  /// scalar's value). False where an external's layout changed: then bind a new loop.
  bool rebind(const Schedule& s, std::vector<Array>& values);

  /// Runs the bound group: its members' runs counted, the values made in full placed.
  void run(const Buffer& arena);

  /// Whether a member runs its op's kernel on views of each tile, having no bound form.
  bool runs_on_views() const { return on_views_ > 0; }

 private:
  /// Where a tile's values are: the per-thread scratch at its base, and the tile of the
  /// product leading the group (row_loop_sources.hpp), whose rows start at `source`.
  struct TileBase {
    std::byte* scratch;
    std::byte* source = nullptr;
  };
  /// Where a tile's run of values starts: in the per-thread scratch, `offset` bytes past its
  /// base; in the product's tile (from_source); or else at `at` plus `row_bytes` per row
  /// before the tile's first (0 for a fixed value). Resolved once per run, so that a tile
  /// costs each member a few additions.
  struct Place {
    static constexpr std::ptrdiff_t from_source = -2;
    const std::byte* at = nullptr;
    std::int64_t row_bytes = 0;
    std::ptrdiff_t offset = -1;
    std::int64_t period = 0;  // > 0: the values repeat every `period` rows (a product's column operand)
    std::byte* in_tile(std::int64_t r0, const TileBase& base) const {
      if (offset >= 0) return base.scratch + offset;
      if (offset == from_source) return base.source;
      return const_cast<std::byte*>(at) + (period > 0 ? r0 % period : r0) * row_bytes;
    }
  };
  struct External {
    kernels::Operand operand;
    std::int64_t per;  // values per row of the tile: the row, or one
    bool one, direct;
    std::size_t scratch;  // gathered: its place in the per-thread scratch
    bool whole = false;   // read whole by the product alone: never by a tile
    // One row of values for every row of a product's output (a Linear's bias): read in place
    // at the tile's columns, the product's tiles run row by row (row_loop_sources.hpp).
    bool column = false;
    std::int64_t row_bytes() const { return per * static_cast<std::int64_t>(itemsize(operand.dtype)); }
  };
  struct Input {
    int member = -1, external = -1;  // its source
    std::int64_t per = 0;            // values per row of the source; 0: one fixed value
    std::ptrdiff_t fixed_at = -1;    // a fixed value: its filled run in fixed_
    std::ptrdiff_t filled_at = -1;   // one value per row read by a full member: its per-thread run
    std::ptrdiff_t converted_at = -1;  // read as another dtype: the per-thread place of its tile, converted
    DType from = DType::f32;           // and the dtype it is converted from
    Place place;                       // its values in a tile (place_values)
  };
  struct Member {
    BoundKernel kernel;
    KernelFn on_views = nullptr;  // its op's kernel, run on views of each tile: no bound form
    bool source = false;          // the product leading the group: its tile is the loop's source
    std::size_t first_input = 0, input_count = 0;  // its inputs in inputs_
    const Attrs* attrs = nullptr;  // the node's, or for a reduction row_attrs over [rows, row]
    Attrs row_attrs;
    KeptAttrs bound_attrs;  // the node's attributes its kernel (or constant value) was bound with
    std::int64_t per = 0;  // values per row it makes
    DType out_dtype = DType::f32;  // the dtype of the values it makes
    bool constant = false, reduction = false, per_row_inputs = false, fixed_inputs = false;
    bool materialized = false, streamed = false;
    bool uniform_last = false;  // its last input is one value per map call, and the kernel has a form for that
    bool one_call = false;  // maps a tile in one call, its operands read where they are
    bool stream_direct = false;  // streamed, one call, read by no later member: its packets go straight past the caches
    int made_in = -1;  // the member whose tile it is made in (share_tiles), or -1: its own
    int same_as = -1;  // a widening whose values are those of this member, which rounds them (fold_round_trips)
    bool absorbed = false;  // run by a later member instead (fuse_bf16_ops): this one does not run
    int fused_op = -1;      // a narrowing that runs this bf16 op on bf16 values (fuse_bf16_ops)
    unsigned fused_uniform = 0;  // and which of the op's operands are one value
    std::size_t scratch = 0;
    Place out, streamed_to;  // where a tile's values are made, and where a streamed result goes
    alignas(8) std::byte constant_value[8];
  };

  static constexpr std::size_t max_inputs = 16;

  static std::size_t idx(int i) { return static_cast<std::size_t>(i); }
  std::span<const Input> inputs_of(const Member& m) const { return {inputs_.data() + m.first_input, m.input_count}; }
  std::span<Input> inputs_of(const Member& m) { return {inputs_.data() + m.first_input, m.input_count}; }
  const Node& node(int member) const { return *s_->order[idx(g_.members[idx(member)].position)]; }
  const Array& value(int position) const { return (*values_)[idx(position)]; }

  std::size_t reserve(std::int64_t elements, DType t) {
    std::size_t at = scratch_bytes_;
    scratch_bytes_ += (static_cast<std::size_t>(elements) * itemsize(t) + 63) & ~std::size_t{63};
    return at;
  }

  /// External k as this run's values hold it.
  External external(std::size_t k) const;

  /// Computes constant member m's value from its node's attributes.
  static void bind_constant(Member& m, const Node& n);

  /// The operands' Metas as member i's kernel sees them on views of a tile: tile-shaped,
  /// or zero-dim. Filled field by field in place: a Meta built on the stack and copied in was
  /// read back before its narrow fields' stores had landed, a stall per operand.
  std::span<const Meta> operand_metas(std::size_t i) const;

  /// Binds member i's kernel to its operands, of Metas `metas` (operand_metas), and to its
  /// node's attributes.
  bool bind_kernel(std::size_t i, std::span<const Meta> metas);

  /// Lists member i's inputs (in inputs_), and sets what it makes per row and whether it reduces.
  void add_inputs(std::size_t i);
  /// Binds member i's bound kernel; false where it has none for its operands.
  bool bind_member(std::size_t i);
  /// Makes member i run its op's kernel on views of each tile.
  void bind_on_views(std::size_t i);

  /// A narrowing f32 -> bf16 that only widening members read, back to f32 (a bf16 op's result
  /// read by the next op, each between casts), rounds its values in f32 instead, and the
  /// widenings are its values (same_as) and do not run: a pass and a tile fewer per op.
  void fold_round_trips();

  /// An f32 op between casts (an op on bf16 tensors: its operands widened, its result only
  /// narrowed) runs in one pass (its kernel's bf16 form) in the narrowing's place, reading the
  /// bf16 values the widenings read; the op and those widenings then do not run. A bf16 group
  /// then makes as many passes as an f32 one, on tiles of half the bytes.
  void fuse_bf16_ops();

  /// Makes narrowing `into` run the bf16 form of member `op`'s kernel, as now bound.
  bool adopt_bf16_op(Member& into, const Member& op) const;

  /// The member whose values member k's are.
  int source_of(int k) const { return members_[idx(k)].same_as >= 0 ? members_[idx(k)].same_as : k; }

  /// Members share tiles where an elementwise kernel may read and write one place (it reads
  /// each element before writing it), the value read being read by no later member:
  /// - A value the group only passes on is made in the tile of the value it is computed from,
  ///   so that a chain of such values (W1 written op by op) keeps one tile hot in L1, not one
  ///   per member.
  /// - A value the group only passes on is made in the tile of a result computed from it: the
  ///   result's lines are then fetched from memory while the value is computed, not while the
  ///   result is stored. (W2's exp(x - m) is made in the softmax's output: its division then
  ///   runs in cache.) A group's results never share arena bytes with its operands
  ///   (memory_plan.hpp gives them overlapping lives), so no operand is overwritten.
  void share_tiles();

  /// Whether the values the group reads and writes in memory are bf16 and none wider.
  bool moves_only_bf16() const;

  /// Whether a member after member `last` reads member `k`.
  bool read_after(int k, std::size_t last) const { return last_reader_[idx(k)] > static_cast<std::ptrdiff_t>(last); }

  /// Where member k's tile of values is made: in scratch, or in place in its result.
  Place member_place(std::size_t k) const;
  Place result_place(std::size_t k) const;

  /// Resolves every member's and input's Place against this run's values.
  void place_values();
  /// Resolves member k's Places (where its tile is made, and where it streams to).
  void place_member(std::size_t k);
  /// Resolves input `in`'s Place (after its member's).
  void place_input(Input& in);
  /// Whether member k's tile is made in place in a result, which each run's values move.
  bool made_in_result(std::size_t k) const;
  /// Lists, once bound, the members and inputs with work on every run (list_run_work).
  void list_run_work();

  /// Rows whose one-per-row values are spread at once for one call of an elementwise member.
  std::int64_t spread_rows() const { return std::clamp<std::int64_t>(row_loop_spread_elements / g_.row, 1, tile_rows_); }

  void run_tile(std::int64_t r0, std::int64_t r1, const TileBase& base) const;
  /// Runs member i (one that runs) over the tile of `rows` rows from r0.
  [[gnu::always_inline]] void run_in_tile(std::size_t i, std::int64_t rows, std::int64_t r0, const TileBase& base) const;

  /// Runs member m over a tile of `rows` rows from r0 into `out` where one call does not: its
  /// operands converted, its one-per-row values spread, or its rows reduced.
  void run_member(const Member& m, std::int64_t rows, std::int64_t r0, std::byte* out, const TileBase& base) const;

  /// Runs member m's op kernel on views of the tile of `rows` rows from r0, into `out`.
  void run_on_views(const Member& m, std::int64_t rows, std::int64_t r0, std::byte* out, const TileBase& base) const;

  /// The per-thread scratch, aligned, of at least scratch_bytes_.
  std::byte* thread_scratch() const;

  /// Whether an operand over a product's output is one contiguous row of values for every
  /// row of the output (the trailing dims spanning a row, the others broadcast).
  bool column_operand(const kernels::Operand& op) const;
  /// Takes the member leading the group (of a kind that has a leader) as the loop's source of
  /// tiles; runs it, and the other members on each of its tiles (row_loop_sources.hpp).
  void bind_source();
  void run_source();
  /// The source of a product's group.
  void bind_product();
  void run_product();
  class ProductTiles;

  /// Splits the lines of a whole tile of each external read in place into one share per
  /// member, fetched before it.
  void share_prefetches();

  /// Fetches into L1 member i's share of the tile from row r of the externals read in place.
  /// Always inlined: GCC takes a function that only prefetches for one without effects and
  /// drops its calls.
  [[gnu::always_inline]] void prefetch_share(std::int64_t r, std::size_t i) const;

  /// Runs elementwise member m over a tile of `rows` rows; at[k]: where input k's values start.
  void run_map(const Member& m, std::int64_t rows, const std::byte* const* at, std::byte* out, std::size_t out_size,
               std::size_t in_size, std::byte* scratch) const;

  const Plan& plan_;
  const Schedule* s_;  // this run's graph and values (rebind)
  const FusionGroup& g_;
  std::vector<Array>* values_;
  std::vector<External> externals_;
  std::vector<std::size_t> gathered_;  // the externals gathered into scratch for each tile
  std::vector<Member> members_;
  std::vector<Input> inputs_;  // every member's, member by member
  std::vector<std::ptrdiff_t> last_reader_;  // for each member, the last member that reads it, or -1
  OpTally member_runs_;  // a run of every member: what each run adds to the op counters
  std::vector<std::byte> fixed_;  // runs of fixed values, chunk_size each, filled before the loop
  std::int64_t tile_rows_ = 1;
  TileGeometry geometry_;  // of the product leading the group (bind_product)
  bool column_reads_ = false;  // an external is read as a column operand: tiles never span rows
  // Map-only groups: the runs of a whole tile of an external read in place that are fetched
  // before each member, member i's from prefetch_from_[i] to prefetch_from_[i + 1].
  struct Prefetch {
    std::size_t external;
    std::int64_t row_bytes, first, last;  // bytes of a row, and the run's first and end byte in the tile
  };
  std::vector<Prefetch> prefetches_;
  std::vector<std::size_t> prefetch_from_;
  std::size_t scratch_bytes_ = 0;
  std::int64_t bf16_ops_ = 0;  // bf16 ops run in one pass (fuse_bf16_ops)
  std::int64_t on_views_ = 0;  // members run on views (bind_on_views)
  // What a run must do, listed at bind: a step of small tensors runs as many members as it
  // has ops, and testing each member's flags on each run costs more than its kernel.
  std::vector<std::size_t> materialized_;  // members made in full: their arena values, each run
  std::vector<std::size_t> running_;       // members a tile runs (not constant, folded or absorbed)
  std::vector<std::pair<std::size_t, std::size_t>> fixed_reads_;  // (member, its input in inputs_) reading a fixed value
  std::vector<std::size_t> moving_members_;  // members whose places follow the run's values
  std::vector<std::size_t> moving_inputs_;   // inputs (in inputs_) whose places do
  bool placed_ = false;  // every place resolved (the first run); later runs resolve the moving ones
};

}  // namespace lt::detail
