#pragma once
// Runs a fusion group led by a tiled product (a matmul and the elementwise ops over its
// output): the product computes its output tile by tile, and right after each tile, on the
// same thread, every other member runs its own kernel on that tile while it is in cache. The
// product's tiles are the ones its kernel computes alone, and each epilogue op computes each
// element as it does alone, so the results equal the reference executor's bit for bit.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <vector>

#include <oneapi/tbb/task_arena.h>

#include "lazytensor/compile/plan.hpp"
#include "lazytensor/ops/kernel_levels.hpp"
#include "lazytensor/ops/kernels/strided.hpp"
#include "lazytensor/ops/tiled_product.hpp"
#include "lazytensor/runtime/fault_site.hpp"

namespace lt::detail {

/// The epilogue takes a tile's rows in blocks of about this many elements, so that the values
/// its members pass on stay in L1/L2 however large the product's tiles are.
inline constexpr std::int64_t epilogue_block_elements = 8192;

/// Places each tile of the product (in the product's array when that is made in full, else in
/// per-thread scratch) and runs the group's other members on it.
class EpilogueSink final : public TileSink {
 public:
  EpilogueSink(const Plan& plan, const Schedule& s, const FusionGroup& g, const std::vector<Array>& values,
               TileGeometry geometry)
      : plan_(plan), s_(s), g_(g), values_(values), geo_(geometry) {
    block_ = std::max(epilogue_block_elements, geo_.m);
    for (std::size_t i = 0; i < g.members.size(); ++i) {
      at_.push_back(scratch_bytes_);
      if (i > 0) reserve(g.members[i].role == MemberRole::constant ? 1 : block_, node(g.members[i].position).meta.dtype);
    }
    for (const GroupExternal& e : g.externals) {
      const View& v = values[static_cast<std::size_t>(e.position)].view;
      operands_.emplace_back(v, e.index_space);
      rows_.push_back({kernels::ElementOffset(e.index_space, operands_.back().strides), 0});
      Read read = v.numel() == 1 ? Read::one : operands_.back().dense ? Read::direct : Read::gather;
      if (read == Read::gather && e.index_space == g.shape) {
        if (auto step = per_row_step(operands_.back())) read = Read::per_row, rows_.back().step = *step;
        else if (per_column(operands_.back())) read = Read::per_column;
      }
      read_.push_back(read);
      at_.push_back(scratch_bytes_);
      if (e.index_space == g.shape && read == Read::gather) reserve(block_, v.dtype);
    }
  }

  std::byte* place(const OutputTile& t, std::int64_t& ld) override {
    const GroupMember& product = g_.members[0];
    const DType dtype = node(product.position).meta.dtype;
    if (materialized(product)) {
      ld = geo_.m;
      return element(values_[static_cast<std::size_t>(product.position)].view, flat(t, 0));
    }
    ld = t.cols;
    Scratch& sc = scratch();
    const std::size_t bytes = static_cast<std::size_t>(t.rows * t.cols) * itemsize(dtype) + 64;
    if (sc.tile.size() < bytes) sc.tile.resize(bytes);
    return aligned(sc.tile);
  }

  void done(const OutputTile& t) override {
    // Isolated: a member kernel that runs in parallel itself must not let this thread start
    // another tile, which would reuse the scratch below.
    tbb::this_task_arena::isolate([&] {
      std::int64_t ld = 0;
      std::byte* tile = place(t, ld);  // the same place the product just wrote
      const std::int64_t block_rows = std::max<std::int64_t>(1, block_ / std::max<std::int64_t>(t.cols, 1));
      for (std::int64_t r0 = 0; r0 < t.rows; r0 += block_rows) run_block(t, tile, ld, r0, std::min(block_rows, t.rows - r0));
    });
  }

 private:
  // per_row: one value per row of a tile (a bias over a product's output channels), read in
  // place through a zero column stride, so the member's kernel takes it as a per-row operand.
  // per_column: one row of values for every row (a Linear's bias), read in place through a
  // zero row stride rather than copied out once per row.
  enum class Read { direct, one, per_row, per_column, gather };
  /// Where a per_row operand's value for an output element lies, and its stride along rows.
  struct PerRow {
    kernels::ElementOffset offset;
    std::int64_t step;
  };
  struct Scratch {
    std::vector<std::byte> tile, block;
  };

  static Scratch& scratch() {
    thread_local Scratch sc;  // per thread and reused: no allocation once a thread has run a tile
    return sc;
  }
  static std::byte* aligned(std::vector<std::byte>& v) {
    return v.data() + ((64 - reinterpret_cast<std::uintptr_t>(v.data()) % 64) % 64);
  }
  static std::byte* element(const View& v, std::int64_t i) { return v.data + i * static_cast<std::int64_t>(itemsize(v.dtype)); }
  void reserve(std::int64_t elements, DType t) {
    scratch_bytes_ += (static_cast<std::size_t>(elements) * itemsize(t) + 63) & ~std::size_t{63};
  }
  const Node& node(int p) const { return *s_.order[static_cast<std::size_t>(p)]; }
  bool materialized(const GroupMember& m) const { return plan_.materialized[static_cast<std::size_t>(m.position)] != 0; }
  /// For an operand constant along the output's columns (the trailing dims spanning m) and
  /// moving along rows by one dim of extent n: its stride along the rows; else nothing.
  std::optional<std::int64_t> per_row_step(const kernels::Operand& op) const {
    const Shape& shape = g_.shape;
    int d = shape.rank() - 1;
    std::int64_t spanned = 1;
    for (; spanned < geo_.m; --d) {
      if (d < 0 || op.strides[d] != 0) return std::nullopt;
      spanned *= shape[d];
    }
    if (spanned != geo_.m) return std::nullopt;
    while (d >= 0 && shape[d] == 1) --d;  // size-1 dims between columns and rows
    if (d < 0 || shape[d] != geo_.n) return std::nullopt;
    return op.strides[d];
  }

  /// Whether an operand is contiguous along the output's columns (the trailing dims spanning m)
  /// and constant along its rows.
  bool per_column(const kernels::Operand& op) const {
    const Shape& shape = g_.shape;
    int d = shape.rank() - 1;
    std::int64_t spanned = 1;
    for (; spanned < geo_.m; --d) {
      if (d < 0 || (op.strides[d] != spanned && shape[d] != 1)) return false;
      spanned *= shape[d];
    }
    if (spanned != geo_.m) return false;
    for (; d >= 0; --d)
      if (op.strides[d] != 0 && shape[d] != 1) return false;
    return true;
  }

  /// The flat output index of row r of tile t, at its first column.
  std::int64_t flat(const OutputTile& t, std::int64_t r) const { return (t.batch * geo_.n + t.i0 + r) * geo_.m + t.j0; }

  /// Members 1.. on rows [r0, r0 + rows) of tile t, whose product values are at `tile`.
  void run_block(const OutputTile& t, std::byte* tile, std::int64_t ld, std::int64_t r0, std::int64_t rows) const {
    Scratch& sc = scratch();
    if (sc.block.size() < scratch_bytes_ + 64) sc.block.resize(scratch_bytes_ + 64);
    std::byte* base = aligned(sc.block);
    // A block that spans whole output rows is one run of the output: read and written in place.
    const bool whole_rows = t.cols == geo_.m;
    const std::int64_t first = flat(t, r0), cols = t.cols;
    const Shape block_shape{rows, cols};
    thread_local std::vector<View> member_views, external_views, args;
    external_views.clear();
    for (std::size_t k = 0; k < g_.externals.size(); ++k) {
      const GroupExternal& e = g_.externals[k];
      const View& v = values_[static_cast<std::size_t>(e.position)].view;
      if (e.index_space != g_.shape) {  // read whole by the product, never by the epilogue
        external_views.emplace_back();
        continue;
      }
      std::byte* slot = base + at_[g_.members.size() + k];
      if (read_[k] == Read::one) {  // zero-dim stays zero-dim, any other single element broadcasts
        external_views.push_back(v.shape.rank() == 0 ? v : View{v.data, v.dtype, Shape{1, 1}, Strides{0, 0}, v.wrapped_number});
      } else if (read_[k] == Read::per_row) {
        external_views.push_back(
            View{element(v, rows_[k].offset(first)), v.dtype, block_shape, Strides{rows_[k].step, 0}, false});
      } else if (read_[k] == Read::per_column) {
        external_views.push_back(View{element(v, rows_[k].offset(first)), v.dtype, block_shape, Strides{0, 1}, false});
      } else if (read_[k] == Read::direct) {
        // Read in place, rows geo_.m apart: a copy of a block that is not whole output rows
        // (a residual beside a product's tile) cost more than the kernels' strided reads.
        external_views.push_back(View{element(v, first), v.dtype, block_shape, Strides{geo_.m, 1}, false});
      } else {
        visit_storage(v.dtype, [&]<class T>(Tag<T>) {
          T* dst = reinterpret_cast<T*>(slot);
          for (std::int64_t r = 0; r < rows; ++r)
            kernels::load_chunk<T>(operands_[k], e.index_space, first + r * geo_.m, first + r * geo_.m + cols, dst + r * cols);
        });
        external_views.push_back(View{slot, v.dtype, block_shape, contiguous_strides(block_shape), false});
      }
    }
    member_views.clear();
    const GroupMember& product = g_.members[0];
    member_views.push_back(View{tile + r0 * ld * static_cast<std::int64_t>(itemsize(node(product.position).meta.dtype)),
                                node(product.position).meta.dtype, block_shape, Strides{ld, 1}, false});
    for (std::size_t i = 1; i < g_.members.size(); ++i) {
      const GroupMember& m = g_.members[i];
      const Node& n = node(m.position);
      const bool into_output = materialized(m) && whole_rows;
      View out;
      if (m.role == MemberRole::constant)
        out = View{base + at_[i], n.meta.dtype, Shape{}, Strides{}, n.meta.wrapped_number};
      else if (into_output)
        out = View{element(values_[static_cast<std::size_t>(m.position)].view, first), n.meta.dtype, block_shape,
                   contiguous_strides(block_shape), false};
      else
        out = View{base + at_[i], n.meta.dtype, block_shape, contiguous_strides(block_shape), false};
      args.clear();
      for (int k : m.inputs)
        args.push_back(k < 0 ? external_views[static_cast<std::size_t>(-1 - k)] : member_views[static_cast<std::size_t>(k)]);
      try {
        at_running_level(*n.op).kernel(args, out, n.attrs);
      } catch (const Error&) {
        raise_recorded_at(n);
      }
      if (m.role == MemberRole::full && materialized(m) && !into_output) {
        const View& whole = values_[static_cast<std::size_t>(m.position)].view;
        const std::size_t row_bytes = static_cast<std::size_t>(cols) * itemsize(n.meta.dtype);
        for (std::int64_t r = 0; r < rows; ++r)
          std::memcpy(element(whole, first + r * geo_.m), out.data + static_cast<std::size_t>(r) * row_bytes, row_bytes);
      }
      member_views.push_back(out);
    }
  }

  const Plan& plan_;
  const Schedule& s_;
  const FusionGroup& g_;
  const std::vector<Array>& values_;
  TileGeometry geo_;
  std::int64_t block_ = 0;        // elements of a block of rows, at most
  std::size_t scratch_bytes_ = 0; // per thread: a block of each member and each gathered input
  std::vector<std::size_t> at_;   // scratch offset of each member, then of each external
  std::vector<kernels::Operand> operands_;
  std::vector<PerRow> rows_;  // per external
  std::vector<Read> read_;
};

/// Runs group `g`, led by a product, whose made-in-full members already have their arrays in
/// `values`.
inline void run_product_group(const Plan& plan, const Schedule& s, const FusionGroup& g, std::vector<Array>& values) {
  const GroupMember& product = g.members[0];
  const Node& n = *s.order[static_cast<std::size_t>(product.position)];
  const TiledProduct* tiled = at_running_level(*n.op).tiled;
  LT_CHECK(tiled != nullptr, "plan: ", n.op->name, " does not run tile by tile");
  std::vector<View> in;
  std::vector<Meta> metas;
  for (int k : product.inputs) {
    const GroupExternal& e = g.externals[static_cast<std::size_t>(-1 - k)];
    in.push_back(values[static_cast<std::size_t>(e.position)].view);
    metas.push_back(s.order[static_cast<std::size_t>(e.position)]->meta);
  }
  EpilogueSink sink(plan, s, g, values, tiled->geometry(metas, n.meta));
  try {
    tiled->run(in, n.meta, n.attrs, sink);
  } catch (const Error&) {
    raise_recorded_at(n);  // the product's own fault: an epilogue's names its member already
  }
}

}  // namespace lt::detail
