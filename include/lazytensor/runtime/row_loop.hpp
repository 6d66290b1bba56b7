#pragma once
// Runs a fusion group (no product) as one loop over small tiles of whole rows, calling each
// member's bound kernel (BoundKernel) on raw runs of values: no views, operands or allocation
// per tile, so a tile can be small enough that every value the members pass on stays in L1.
// A bound kernel computes what its op's kernel computes, so the results equal the reference
// executor's bit for bit. A group with a member that has no bound form for its operands runs
// through the view-based loop instead (plan_executor.hpp).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "lazytensor/compile/plan.hpp"
#include "lazytensor/ops/execute.hpp"
#include "lazytensor/ops/kernels/elementwise.hpp"
#include "lazytensor/ops/kernels/packet.hpp"
#include "lazytensor/ops/kernels/parallel.hpp"
#include "lazytensor/ops/kernels/strided.hpp"

namespace lt::detail {

/// Elements per tile of a group that reduces rows: whole rows, about this many values of each
/// member. Here (48 KB L1 and 1 MB L2 per core) W2's softmax ran about a tenth faster than with
/// 1,024 (its 4,096 rows then take 512 tiles, not 4,096, each a few calls).
inline constexpr std::int64_t row_loop_tile_elements = 8192;
/// Elements per tile of a group that only maps. Members read their operands one after
/// another; in short tiles the values passed on stay in L1, and the tile two ahead, fetched
/// in shares while this one runs, keeps every operand's stream in flight at once, as one
/// fused loop does. Here W1 written op by op ran about a seventh faster than with 512-element
/// tiles fetched one ahead; 256 cost more calls than it saved, and 1,024 was slower still.
inline constexpr std::int64_t map_loop_tile_elements = 384;
inline constexpr std::int64_t map_loop_prefetch_tiles = 2;
/// Elements of one-per-row values spread over their rows for one call of a member: calls
/// on W4's batch-norm rows of 144 cost more than their arithmetic.
inline constexpr std::int64_t row_loop_spread_elements = 1024;
/// Elements per parallel block: enough work to amortise a task.
inline constexpr std::int64_t row_loop_block_elements = 32768;

/// `count` copies of the `size`-byte value at `value`.
inline void fill_values(std::byte* dst, const std::byte* value, std::size_t size, std::int64_t count) {
  auto fill = [&]<class U>(Tag<U>) {
    U v;
    std::memcpy(&v, value, sizeof v);
    std::fill_n(reinterpret_cast<U*>(dst), count, v);
  };
  switch (size) {
    case 1: return fill(Tag<std::uint8_t>{});
    case 2: return fill(Tag<std::uint16_t>{});
    case 4: return fill(Tag<std::uint32_t>{});
    default: return fill(Tag<std::uint64_t>{});
  }
}

/// n values at `from` (dtype `t`) as dtype `to`, converted as kernels convert operands.
/// Both places are aligned to their dtypes (arena, scratch and rows of them are).
inline void convert_values(DType t, const std::byte* from, DType to, std::byte* dst, std::int64_t n) {
  visit(t, [&]<class T>(Tag<T>) {
    visit(to, [&]<class U>(Tag<U>) {
      U* d = reinterpret_cast<U*>(dst);
      if constexpr (std::is_same_v<T, bool>) {
        // Read as bytes: a loop that converts bools one at a time does not vectorise.
        const auto* b = reinterpret_cast<const std::uint8_t*>(from);
        for (std::int64_t i = 0; i < n; ++i) d[i] = static_cast<U>(b[i] != 0);
      } else {
        const T* f = reinterpret_cast<const T*>(from);
        for (std::int64_t i = 0; i < n; ++i) d[i] = static_cast<U>(f[i]);
      }
    });
  });
}

/// The array a plan step writes for position p: its place in the arena, or a fresh array.
inline Array output_array(const Plan& plan, const Buffer& arena, int p) {
  const Meta& m = plan.nodes[static_cast<std::size_t>(p)].meta;
  std::int64_t offset = plan.arena_offset[static_cast<std::size_t>(p)];
  if (offset < 0) return Array::empty(m.dtype, m.shape);
  return Array{arena, View{arena.data() + offset, m.dtype, m.shape, contiguous_strides(m.shape)}};
}

class RowLoop {
 public:
  RowLoop(const Plan& plan, const Schedule& s, const FusionGroup& g, std::vector<Array>& values)
      : plan_(plan), s_(&s), g_(g), values_(&values) {}

  /// Binds every member to its operands; false where one has no bound form (nothing has run).
  bool bind() {
    const std::int64_t row = g_.row;
    if (row < 1 || g_.rows() < 1) return false;
    const bool reduces = std::any_of(g_.members.begin(), g_.members.end(), [&](const GroupMember& gm) {
      return s_->order[idx(gm.position)]->op->kind == OpKind::reduction;
    });
    tile_rows_ = std::clamp<std::int64_t>((reduces ? row_loop_tile_elements : map_loop_tile_elements) / row, 1, g_.rows());
    for (std::size_t k = 0; k < g_.externals.size(); ++k) {
      External x = external(k);
      if (!x.one && !x.direct) {
        x.scratch = reserve(tile_rows_ * x.per, x.operand.dtype);
        gathered_.push_back(k);
      }
      externals_.push_back(x);
    }
    members_.resize(g_.members.size());
    std::size_t input_count = 0;
    for (const GroupMember& gm : g_.members) input_count += gm.inputs.size();
    inputs_.reserve(input_count);
    for (std::size_t i = 0; i < g_.members.size(); ++i)
      if (!bind_member(i)) return false;
    for (std::size_t i = 0; i < g_.members.size(); ++i) member_runs_.add(*node(static_cast<int>(i)).op);
    last_reader_.assign(members_.size(), -1);
    for (std::size_t i = 0; i < members_.size(); ++i)
      for (const Input& in : inputs_of(members_[i]))
        if (in.member >= 0) last_reader_[idx(in.member)] = static_cast<std::ptrdiff_t>(i);
    share_tiles();
    for (std::size_t i = 0; i < members_.size(); ++i) {
      Member& m = members_[i];
      m.stream_direct = m.streamed && m.one_call && !read_after(static_cast<int>(i), i);
    }
    if (!reduces) share_prefetches();
    return true;
  }

  /// Binds the loop, bound for an earlier run of the same plan, to graph `s` (which matches
  /// the plan) and its `values`. Only what may differ between such graphs is bound again: the
  /// externals' places, and the kernels of members whose attributes now hold other data (a
  /// scalar's value). False where an external's layout changed: then bind a new loop.
  bool rebind(const Schedule& s, std::vector<Array>& values) {
    s_ = &s;
    values_ = &values;
    for (std::size_t k = 0; k < externals_.size(); ++k) {
      External x = external(k);
      External& kept = externals_[k];
      if (x.one != kept.one || x.direct != kept.direct) return false;
      kept.operand = x.operand;
    }
    for (std::size_t i = 0; i < members_.size(); ++i) {
      Member& m = members_[i];
      const Node& n = node(static_cast<int>(i));
      if (m.constant) {
        if (!(n.attrs == m.bound_attrs)) bind_constant(m, n);
        continue;
      }
      if (!m.reduction) m.attrs = &n.attrs;
      if (n.attrs == m.bound_attrs) continue;
      const BoundKernel was = m.kernel;
      if (!bind_kernel(i, operand_metas(i)) || m.kernel.input != was.input || (m.kernel.map == nullptr) != (was.map == nullptr) ||
          (m.kernel.map_uniform_last == nullptr) != (was.map_uniform_last == nullptr) ||
          (m.kernel.reduce == nullptr) != (was.reduce == nullptr))
        return false;
    }
    return true;
  }

  /// Runs the bound group: its members' runs counted, the values made in full placed.
  void run(const Buffer& arena) {
    member_runs_.report();
    for (std::size_t i = 0; i < g_.members.size(); ++i) {
      const Member& m = members_[i];
      if (m.materialized) (*values_)[idx(g_.members[i].position)] = output_array(plan_, arena, g_.members[i].position);
    }
    place_values();
    for (std::size_t i = 0; i < g_.members.size(); ++i) {
      const Member& m = members_[i];
      if (m.constant) continue;
      for (const Input& in : inputs_of(m)) {
        if (in.fixed_at < 0) continue;
        // A fixed value (a constant or a one-element external) as the reader's compute dtype.
        const std::byte* fixed = in.member >= 0 ? members_[idx(in.member)].constant_value
                                                : value(g_.externals[idx(in.external)].position).view.data;
        DType from = in.member >= 0 ? node(in.member).meta.dtype : externals_[idx(in.external)].operand.dtype;
        alignas(8) std::byte converted[8];
        convert_values(from, fixed, m.kernel.input, converted, 1);
        fill_values(fixed_.data() + in.fixed_at, converted, itemsize(m.kernel.input), std::min(kernels::chunk_size, tile_rows_ * m.per));
      }
    }
    const std::int64_t block_rows = std::max(tile_rows_, row_loop_block_elements / g_.row);
    kernels::parallel_blocks(g_.rows(), block_rows, [&](std::int64_t b0, std::int64_t b1) {
      thread_local std::vector<std::byte> scratch;
      if (scratch.size() < scratch_bytes_ + 64) scratch.resize(scratch_bytes_ + 64);
      std::byte* base = scratch.data() + ((64 - reinterpret_cast<std::uintptr_t>(scratch.data()) % 64) % 64);
      for (std::int64_t r0 = b0; r0 < b1; r0 += tile_rows_) run_tile(r0, std::min(b1, r0 + tile_rows_), base);
      kernels::pk::stream_fence();
    });
  }

 private:
  /// Where a tile's run of values starts: in the per-thread scratch, `offset` bytes past its
  /// base, or else at `at` plus `row_bytes` per row before the tile's first (0 for a fixed
  /// value). Resolved once per run, so that a tile costs each member a few additions.
  struct Place {
    const std::byte* at = nullptr;
    std::int64_t row_bytes = 0;
    std::ptrdiff_t offset = -1;
    std::byte* in_tile(std::int64_t r0, std::byte* base) const {
      return offset >= 0 ? base + offset : const_cast<std::byte*>(at) + r0 * row_bytes;
    }
  };
  struct External {
    kernels::Operand operand;
    std::int64_t per;  // values per row of the tile: the row, or one
    bool one, direct;
    std::size_t scratch;  // gathered: its place in the per-thread scratch
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
    std::size_t first_input = 0, input_count = 0;  // its inputs in inputs_
    const Attrs* attrs = nullptr;  // the node's, or for a reduction row_attrs over [rows, row]
    Attrs row_attrs;
    Attrs bound_attrs;  // the node's attributes its kernel (or constant value) was bound with
    std::int64_t per = 0;  // values per row it makes
    DType out_dtype = DType::f32;  // the dtype of the values it makes
    bool constant = false, reduction = false, per_row_inputs = false, fixed_inputs = false;
    bool materialized = false, streamed = false;
    bool uniform_last = false;  // its last input is one value per map call, and the kernel has a form for that
    bool one_call = false;  // maps a tile in one call, its operands read where they are
    bool stream_direct = false;  // streamed, one call, read by no later member: its packets go straight past the caches
    int made_in = -1;  // the member whose tile it is made in (share_tiles), or -1: its own
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
  External external(std::size_t k) const {
    const GroupExternal& e = g_.externals[k];
    const View& v = value(e.position).view;
    const std::int64_t per = e.index_space == g_.shape ? g_.row : 1;
    External x{kernels::Operand(v, e.index_space), per, v.numel() == 1, false, 0};
    x.direct = !x.one && x.operand.dense && v.shape == e.index_space;
    return x;
  }

  /// Computes constant member m's value from its node's attributes.
  static void bind_constant(Member& m, const Node& n) {
    n.op->kernel({}, View{m.constant_value, n.meta.dtype, Shape{}, Strides{}, n.meta.wrapped_number}, n.attrs);
    m.bound_attrs = n.attrs;
  }

  /// The operands' Metas as the view-based loop shows them to member i's kernel: tile-shaped,
  /// or zero-dim. Filled field by field in place: a Meta built on the stack and copied in was
  /// read back before its narrow fields' stores had landed, a stall per operand.
  std::span<const Meta> operand_metas(std::size_t i) const {
    thread_local std::vector<Meta> metas;
    metas.clear();
    static const Shape tile_shape{1, 1}, zero_dim{};
    auto add_meta = [&](const Shape& shape, DType dtype, bool wrapped_number) {
      Meta& meta = metas.emplace_back();
      meta.shape = shape;
      meta.dtype = dtype;
      meta.wrapped_number = wrapped_number;
    };
    for (int k : g_.members[i].inputs) {
      if (k >= 0) {
        const Node& q = node(k);
        if (members_[idx(k)].constant) metas.push_back(q.meta);
        else add_meta(tile_shape, q.meta.dtype, false);
      } else {
        const View& v = value(g_.externals[idx(-1 - k)].position).view;
        add_meta(externals_[idx(-1 - k)].one && v.shape.rank() == 0 ? zero_dim : tile_shape, v.dtype, v.wrapped_number);
      }
    }
    return metas;
  }

  /// Binds member i's kernel to its operands, of Metas `metas` (operand_metas), and to its
  /// node's attributes.
  bool bind_kernel(std::size_t i, std::span<const Meta> metas) {
    Member& m = members_[i];
    const Node& n = node(static_cast<int>(i));
    Meta out;
    out.shape = Shape{1, 1};
    out.dtype = n.meta.dtype;
    if (m.reduction) m.row_attrs = reduction::attrs_over_rows(n.attrs);
    m.attrs = m.reduction ? &m.row_attrs : &n.attrs;
    m.bound_attrs = n.attrs;
    return n.op->bind(metas, out, *m.attrs, m.kernel);
  }

  bool bind_member(std::size_t i) {
    const GroupMember& gm = g_.members[i];
    const Node& n = node(static_cast<int>(i));
    Member& m = members_[i];
    if (gm.role == MemberRole::constant) {
      if (!gm.inputs.empty() || itemsize(n.meta.dtype) > sizeof m.constant_value) return false;
      m.constant = true;
      bind_constant(m, n);
      return true;
    }
    if (n.op->bind == nullptr || (gm.role != MemberRole::full && gm.role != MemberRole::row) ||
        gm.inputs.size() > max_inputs)
      return false;
    m.per = gm.role == MemberRole::full ? g_.row : 1;
    m.out_dtype = n.meta.dtype;
    m.reduction = n.op->kind == OpKind::reduction;
    m.first_input = inputs_.size();
    m.input_count = gm.inputs.size();
    for (int k : gm.inputs) {
      Input in;
      if (k >= 0) {
        const Member& src = members_[idx(k)];
        in.member = k;
        in.per = src.constant ? 0 : src.per;
      } else {
        const External& e = externals_[idx(-1 - k)];
        in.external = -1 - k;
        in.per = e.one ? 0 : e.per;
      }
      inputs_.push_back(in);
    }
    const std::span<const Meta> metas = operand_metas(i);
    if (!bind_kernel(i, metas)) return false;
    for (std::size_t k = 0; k < m.input_count; ++k) {
      Input& in = inputs_of(m)[k];
      if (in.per != 0 && metas[k].dtype != m.kernel.input) {
        // Converted a tile at a time, as the op's kernel converts its operands (where's bool
        // condition, a sum of bools).
        in.from = metas[k].dtype;
        in.converted_at = static_cast<std::ptrdiff_t>(reserve(tile_rows_ * in.per, m.kernel.input));
      }
      if (m.reduction ? in.per != g_.row : in.per != m.per && in.per != 0 && in.per != 1) return false;
      if (in.per == 0) {
        in.fixed_at = static_cast<std::ptrdiff_t>(fixed_.size());
        fixed_.resize(fixed_.size() + static_cast<std::size_t>(std::min(kernels::chunk_size, tile_rows_ * m.per)) * sizeof(double));
        m.fixed_inputs = true;
      } else if (in.per != m.per) {
        in.filled_at = static_cast<std::ptrdiff_t>(reserve(std::max(kernels::chunk_size, spread_rows() * g_.row), m.kernel.input));
        m.per_row_inputs = true;
      }
    }
    if (m.reduction ? m.kernel.reduce == nullptr || m.per != 1 : m.kernel.map == nullptr) return false;
    if (!m.reduction && m.input_count > 0 && m.kernel.map_uniform_last != nullptr) {
      const Input& last = inputs_of(m).back();
      m.uniform_last = last.fixed_at >= 0 || last.filled_at >= 0;
    }
    m.one_call = !m.reduction && !m.per_row_inputs && (!m.fixed_inputs || tile_rows_ * m.per <= kernels::chunk_size) &&
                 std::none_of(inputs_of(m).begin(), inputs_of(m).end(), [](const Input& in) { return in.converted_at >= 0; });
    m.materialized = plan_.materialized[idx(gm.position)];
    // A result far larger than the caches is streamed past them, so that its lines need not be
    // read from memory before being written: stored from the member's packets where it takes
    // one call and no later member reads it (stream_direct), else made in scratch and copied.
    const std::int64_t bytes = n.meta.shape.numel() * static_cast<std::int64_t>(itemsize(n.meta.dtype));
    m.streamed = m.materialized && gm.role == MemberRole::full && bytes >= kernels::streaming_store_bytes;
    if (!m.materialized || m.streamed) m.scratch = reserve(tile_rows_ * m.per, n.meta.dtype);
    return true;
  }

  /// Members share tiles where an elementwise kernel may read and write one place (it reads
  /// each element before writing it), the value read being read by no later member:
  /// - A value the group only passes on is made in the tile of the value it is computed from,
  ///   so that a chain of such values (W1 written op by op) keeps one tile hot in L1, not one
  ///   per member.
  /// - A value the group only passes on is made in the tile of a result computed from it: the
  ///   result's lines are then fetched from memory while the value is computed, not while the
  ///   result is stored. (W2's exp(x - m) is made in the softmax's output: its division then
  ///   runs in cache.) A group's results never share arena bytes with its operands (plan.hpp
  ///   gives them overlapping lives), so no operand is overwritten.
  void share_tiles() {
    // Whether member i, reading member k, may share k's place: k's value is only passed on,
    // is as wide as i's, and is read by no member after i.
    auto shares = [&](int k, std::size_t i) {
      const Member &value = members_[idx(k)], &m = members_[i];
      return !value.materialized && !value.constant && !value.reduction && value.per == m.per &&
             itemsize(value.out_dtype) == itemsize(m.out_dtype) && !read_after(k, i);
    };
    for (std::size_t i = 0; i < members_.size(); ++i) {
      Member& m = members_[i];
      if (m.reduction || m.constant || (m.materialized && m.streamed)) continue;
      for (const Input& in : inputs_of(m)) {
        if (in.member < 0 || !shares(in.member, i)) continue;
        Member& value = members_[idx(in.member)];
        if (!m.materialized) {
          // A chain: made where its first value is, named directly, so that placing a chain of
          // 100 values (W5) is not 100 walks back along it.
          m.made_in = value.made_in >= 0 ? value.made_in : in.member;
          break;
        }
        if (value.made_in >= 0) continue;  // made in a chain's tile already
        value.made_in = static_cast<int>(i);
        break;
      }
    }
  }

  /// Whether a member after member `last` reads member `k`.
  bool read_after(int k, std::size_t last) const { return last_reader_[idx(k)] > static_cast<std::ptrdiff_t>(last); }

  /// Where member k's tile of values is made: in scratch, or in place in its result.
  Place member_place(std::size_t k) const {
    if (members_[k].made_in >= 0) return member_place(idx(members_[k].made_in));
    const Member& m = members_[k];
    if (!m.materialized || m.streamed) return Place{nullptr, 0, static_cast<std::ptrdiff_t>(m.scratch)};
    return result_place(k);
  }
  Place result_place(std::size_t k) const {
    const View& v = value(g_.members[k].position).view;
    return Place{v.data, members_[k].per * static_cast<std::int64_t>(itemsize(v.dtype))};
  }

  /// Resolves every member's and input's Place against this run's values.
  void place_values() {
    for (std::size_t i = 0; i < members_.size(); ++i) {
      Member& m = members_[i];
      if (m.constant) continue;
      m.out = member_place(i);
      if (m.streamed) m.streamed_to = result_place(i);
    }
    for (Member& m : members_) {
      for (Input& in : inputs_of(m)) {
        if (in.fixed_at >= 0) {
          in.place = Place{fixed_.data() + in.fixed_at};
        } else if (in.member >= 0) {
          in.place = members_[idx(in.member)].out;
        } else {
          const External& e = externals_[idx(in.external)];
          in.place = e.direct ? Place{e.operand.data, e.row_bytes()}
                              : Place{nullptr, 0, static_cast<std::ptrdiff_t>(e.scratch)};
        }
      }
    }
  }

  /// Rows whose one-per-row values are spread at once for one call of an elementwise member.
  std::int64_t spread_rows() const { return std::clamp<std::int64_t>(row_loop_spread_elements / g_.row, 1, tile_rows_); }

  void run_tile(std::int64_t r0, std::int64_t r1, std::byte* base) const {
    const std::int64_t rows = r1 - r0;
    // A short tile of the externals read in place, map_loop_prefetch_tiles ahead, is fetched
    // while this one runs, a share before each member: the hardware prefetchers alone left W1
    // written op by op a fifth slower, and the whole tile at once (at 2 threads) about a
    // seventh. A long tile is left to them: fetching one ahead in a burst stalled on full miss
    // buffers (W2 about a tenth slower on a Zen 4 CPU).
    const std::int64_t ahead = r1 + (map_loop_prefetch_tiles - 1) * tile_rows_;
    const bool prefetch = !prefetches_.empty() && ahead + tile_rows_ <= g_.rows();
    for (std::size_t k : gathered_) {
      const External& e = externals_[k];
      visit(e.operand.dtype, [&]<class T>(Tag<T>) {
        kernels::load_chunk<T>(e.operand, g_.externals[k].index_space, r0 * e.per, r1 * e.per,
                               reinterpret_cast<T*>(base + e.scratch));
      });
    }
    for (std::size_t i = 0; i < members_.size(); ++i) {
      const Member& m = members_[i];
      if (prefetch) prefetch_share(ahead, i);
      if (m.constant) continue;
      std::byte* out = m.out.in_tile(r0, base);
      const std::span<const Input> ins = inputs_of(m);
      if (m.one_call) {
        const void* src[max_inputs];
        for (std::size_t k = 0; k < ins.size(); ++k) src[k] = ins[k].place.in_tile(r0, base);
        const auto map = m.uniform_last ? m.kernel.map_uniform_last : m.kernel.map;
        if (m.stream_direct) {
          map(m.kernel.state, src, m.streamed_to.in_tile(r0, base), rows * m.per, true);
          continue;
        }
        map(m.kernel.state, src, out, rows * m.per, false);
      } else {
        run_member(m, rows, r0, out, base);
      }
      if (m.streamed) kernels::pk::stream_copy(m.streamed_to.in_tile(r0, base), out, static_cast<std::size_t>(m.streamed_to.row_bytes * rows));
    }
  }

  /// Runs member m over a tile of `rows` rows from r0 into `out` where one call does not: its
  /// operands converted, its one-per-row values spread, or its rows reduced.
  void run_member(const Member& m, std::int64_t rows, std::int64_t r0, std::byte* out, std::byte* base) const {
    const std::int64_t row = g_.row;
    const std::span<const Input> ins = inputs_of(m);
    const std::size_t out_size = itemsize(m.out_dtype), in_size = itemsize(m.kernel.input);
    const std::byte* at[max_inputs];
    for (std::size_t k = 0; k < ins.size(); ++k) {
      const Input& in = ins[k];
      at[k] = in.place.in_tile(r0, base);
      if (in.converted_at >= 0) {
        convert_values(in.from, at[k], m.kernel.input, base + in.converted_at, rows * in.per);
        at[k] = base + in.converted_at;
      }
    }
    if (!m.reduction) return run_map(m, rows, at, out, out_size, in_size, base);
    for (std::int64_t r = 0; r < rows; ++r) {
      std::byte* dst = out + r * static_cast<std::int64_t>(out_size);
      const std::byte* row_values = at[0] + r * row * static_cast<std::int64_t>(in_size);
      if (m.kernel.result == m.out_dtype) {
        m.kernel.reduce(row_values, row, *m.attrs, dst);
        continue;
      }
      alignas(8) std::byte result[8];
      m.kernel.reduce(row_values, row, *m.attrs, result);
      convert_values(m.kernel.result, result, m.out_dtype, dst, 1);
    }
  }

  /// Splits the lines of a whole tile of each external read in place into one share per
  /// member, fetched before it.
  void share_prefetches() {
    const auto shares = static_cast<std::int64_t>(members_.size());
    for (std::int64_t share = 0; share < shares; ++share) {
      prefetch_from_.push_back(prefetches_.size());
      for (const External& e : externals_) {
        if (!e.direct) continue;
        const std::int64_t row_bytes = e.row_bytes();
        const std::int64_t lines = (tile_rows_ * row_bytes + 63) / 64;
        const std::int64_t first = lines * share / shares, last = lines * (share + 1) / shares;
        if (first < last) prefetches_.push_back(Prefetch{static_cast<std::size_t>(&e - externals_.data()), row_bytes, 64 * first, 64 * last});
      }
    }
    prefetch_from_.push_back(prefetches_.size());
  }

  /// Fetches into L1 member i's share of the tile from row r of the externals read in place.
  /// Always inlined: GCC takes a function that only prefetches for one without effects and
  /// drops its calls.
  [[gnu::always_inline]] void prefetch_share(std::int64_t r, std::size_t i) const {
    for (std::size_t p = prefetch_from_[i]; p < prefetch_from_[i + 1]; ++p) {
      const Prefetch& f = prefetches_[p];
      const std::byte* next = externals_[f.external].operand.data + r * f.row_bytes;
      for (std::int64_t at = f.first; at < f.last; at += 64) __builtin_prefetch(next + at, 0, 3);
    }
  }

  /// Runs elementwise member m over a tile of `rows` rows; at[k]: where input k's values start.
  void run_map(const Member& m, std::int64_t rows, const std::byte* const* at, std::byte* out, std::size_t out_size,
               std::size_t in_size, std::byte* base) const {
    const std::int64_t row = g_.row;
    const std::span<const Input> ins = inputs_of(m);
    const void* src[max_inputs];
    const auto kernel = m.uniform_last ? m.kernel.map_uniform_last : m.kernel.map;
    auto map = [&](std::int64_t first, std::int64_t n) {
      for (std::size_t k = 0; k < ins.size(); ++k)
        if (ins[k].fixed_at < 0 && ins[k].filled_at < 0) src[k] = at[k] + first * static_cast<std::int64_t>(in_size);
      kernel(m.kernel.state, src, out + first * static_cast<std::int64_t>(out_size), n, false);
    };
    for (std::size_t k = 0; k < ins.size(); ++k) {
      if (ins[k].fixed_at >= 0) src[k] = at[k];
      if (ins[k].filled_at >= 0) src[k] = base + ins[k].filled_at;
    }
    const std::int64_t total = rows * m.per;
    if (!m.per_row_inputs && !m.fixed_inputs) {
      map(0, total);
    } else if (!m.per_row_inputs) {
      for (std::int64_t b = 0; b < total; b += kernels::chunk_size) map(b, std::min(kernels::chunk_size, total - b));
    } else if (!m.uniform_last && spread_rows() > 1) {
      // One value per row, read by a full member: each spread over its row, several rows per
      // call, so that short rows (a channel's H x W) do not cost a call each.
      for (std::int64_t r = 0; r < rows; r += spread_rows()) {
        const std::int64_t count = std::min(spread_rows(), rows - r);
        for (std::size_t k = 0; k < ins.size(); ++k)
          if (ins[k].filled_at >= 0)
            for (std::int64_t q = 0; q < count; ++q)
              fill_values(base + ins[k].filled_at + q * row * static_cast<std::int64_t>(in_size),
                          at[k] + (r + q) * static_cast<std::int64_t>(in_size), in_size, row);
        map(r * row, count * row);
      }
    } else {
      // One value per row, read by a full member: a run of the row's value, refilled per row.
      // A whole row per call where no fixed value (filled to a chunk) is read: spread values
      // have room for a row.
      const std::int64_t run = m.fixed_inputs ? std::min(kernels::chunk_size, row) : row;
      for (std::int64_t r = 0; r < rows; ++r) {
        for (std::size_t k = 0; k < ins.size(); ++k)
          if (ins[k].filled_at >= 0)
            fill_values(base + ins[k].filled_at, at[k] + r * static_cast<std::int64_t>(in_size), in_size,
                        m.uniform_last && k + 1 == ins.size() ? 1 : run);
        for (std::int64_t b = 0; b < row; b += run) map(r * row + b, std::min(run, row - b));
      }
    }
  }

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
  // Map-only groups: the runs of a whole tile of an external read in place that are fetched
  // before each member, member i's from prefetch_from_[i] to prefetch_from_[i + 1].
  struct Prefetch {
    std::size_t external;
    std::int64_t row_bytes, first, last;  // bytes of a row, and the run's first and end byte in the tile
  };
  std::vector<Prefetch> prefetches_;
  std::vector<std::size_t> prefetch_from_;
  std::size_t scratch_bytes_ = 0;
};

}  // namespace lt::detail
