#pragma once
// RowLoop's sources of tiles in groups with a leader: a tiled product (a matmul and the elementwise ops
// over its output): the product computes its output tile by tile, and right after each tile,
// on the same thread, the loop runs the other members over it while it is in cache. The
// group's index space is the product's output (a row is one element), so a tile of the loop
// is a run of the output: a whole product tile when it spans whole rows of its matrix, else
// each of its rows. The product's tiles are those its kernel computes alone, and each member
// computes each element as it does alone, so the results equal the reference executor's.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include <oneapi/tbb/task_arena.h>

#include "lazytensor/core/error.hpp"
#include "lazytensor/core/small_vector.hpp"
#include "lazytensor/ops/kernel_levels.hpp"
#include "lazytensor/ops/kernels/packet.hpp"
#include "lazytensor/ops/tiled_product.hpp"
#include "lazytensor/runtime/fault_site.hpp"
#include "lazytensor/runtime/row_loop_class.hpp"

namespace lt::detail {

/// Places each tile of the product (in the product's array when that is made in full, else in
/// per-thread scratch) and runs the loop's tiles over it.
class RowLoop::ProductTiles final : public TileSink {
 public:
  explicit ProductTiles(const RowLoop& loop) : loop_(loop), item_(static_cast<std::int64_t>(itemsize(loop.members_[0].out_dtype))) {}

  std::byte* place(const OutputTile& t, std::int64_t& ld) override {
    if (loop_.members_[0].materialized) {
      ld = loop_.geometry_.m;
      return loop_.value(loop_.g_.members[0].position).view.data + first(t, 0) * item_;
    }
    ld = t.cols;
    thread_local std::vector<std::byte> tile;  // per thread and reused, as the loop's scratch
    const auto bytes = static_cast<std::size_t>(t.rows * t.cols * item_ + 64);
    if (tile.size() < bytes) tile.resize(bytes);
    return tile.data() + ((64 - reinterpret_cast<std::uintptr_t>(tile.data()) % 64) % 64);
  }

  void done(const OutputTile& t) override {
    if (!loop_.runs_on_views()) return run_over(t);
    // Isolated: a member kernel that runs in parallel itself must not let this thread start
    // another tile, which would reuse the scratch.
    tbb::this_task_arena::isolate([&] { run_over(t); });
  }

 private:
  /// The flat output index of row r of tile t, at its first column.
  std::int64_t first(const OutputTile& t, std::int64_t r) const {
    const TileGeometry& g = loop_.geometry_;
    return (t.batch * g.n + t.i0 + r) * g.m + t.j0;
  }

  void run_over(const OutputTile& t) {
    std::int64_t ld = 0;
    std::byte* tile = place(t, ld);  // the same place the product just wrote
    TileBase base{loop_.thread_scratch()};
    auto run = [&](std::int64_t from, std::int64_t count, std::byte* values) {
      for (std::int64_t at = 0; at < count; at += loop_.tile_rows_) {
        base.source = values + at * item_;
        loop_.run_tile(from + at, from + std::min(count, at + loop_.tile_rows_), base);
      }
    };
    if (t.cols == loop_.geometry_.m && !loop_.column_reads_) {
      run(first(t, 0), t.rows * t.cols, tile);
    } else {
      for (std::int64_t r = 0; r < t.rows; ++r) run(first(t, r), t.cols, tile + r * ld * item_);
    }
    kernels::pk::stream_fence();
  }

  const RowLoop& loop_;
  std::int64_t item_;  // bytes of an output element
};

inline void RowLoop::bind_product() {
  const Node& n = node(0);
  const TiledProduct* tiled = at_running_level(*n.op).tiled;
  LT_CHECK(tiled != nullptr, "plan: ", n.op->name, " does not run tile by tile");
  SmallVector<Meta, 4> metas;
  for (int k : g_.members[0].inputs) metas.push_back(s_->order[idx(g_.externals[idx(-1 - k)].position)]->meta);
  geometry_ = tiled->geometry(metas, n.meta);
}

inline bool RowLoop::column_operand(const kernels::Operand& op) const {
  const Shape& shape = g_.shape;
  int d = shape.rank() - 1;
  std::int64_t spanned = 1;
  for (; spanned < geometry_.m; --d) {
    if (d < 0 || (op.strides[d] != spanned && shape[d] != 1)) return false;
    spanned *= shape[d];
  }
  if (spanned != geometry_.m) return false;
  for (; d >= 0; --d)
    if (op.strides[d] != 0 && shape[d] != 1) return false;
  return true;
}

inline void RowLoop::bind_source() {
  switch (g_.kind) {
    case GroupKind::product: return bind_product();
    case GroupKind::map:
    case GroupKind::rows: break;
  }
  LT_CHECK(false, "plan: a group of kind ", kind_info(g_.kind).name, " has no leader");
}

inline void RowLoop::run_source() {
  switch (g_.kind) {
    case GroupKind::product: return run_product();
    case GroupKind::map:
    case GroupKind::rows: return;  // never bound (bind_source)
  }
}

inline void RowLoop::run_product() {
  const Node& n = node(0);
  SmallVector<View, 4> in;
  for (int k : g_.members[0].inputs) in.push_back(value(g_.externals[idx(-1 - k)].position).view);
  ProductTiles tiles(*this);
  try {
    at_running_level(*n.op).tiled->run(in, n.meta, n.attrs, tiles);
  } catch (const Error&) {
    raise_recorded_at(n);  // the product's own fault: a member's names its member already
  }
}

}  // namespace lt::detail
