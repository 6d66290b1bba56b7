#pragma once
// A contraction that computes its output as a fixed set of tiles and lets its caller choose
// where each tile goes and what runs on it next: the hook for an elementwise epilogue (bias,
// activation, residual) that works on each tile while it is still in cache.
#include <cstddef>
#include <cstdint>
#include <span>

#include "lazytensor/ops/descriptor.hpp"

namespace lt {

/// The output seen as `batches` row-major matrices of n x m, in the output's element order:
/// element (b, i, j) is flat element (b * n + i) * m + j.
struct TileGeometry {
  std::int64_t batches = 1, n = 1, m = 1;
};

/// Rows [i0, i0 + rows) and columns [j0, j0 + cols) of matrix `batch`.
struct OutputTile {
  std::int64_t batch, i0, rows, j0, cols;
};

/// Where a tiled product writes each tile, and what runs on it right after. Both calls come
/// from the thread that computes the tile, `place` just before and `done` just after, with
/// no other tile of the product computed on that thread in between.
class TileSink {
 public:
  /// The memory for tile t: t.rows rows of t.cols elements of the output dtype, `ld`
  /// elements apart. The product writes every element and reads none.
  virtual std::byte* place(const OutputTile& t, std::int64_t& ld) = 0;
  virtual void done(const OutputTile& t) = 0;

 protected:
  ~TileSink() = default;
};

/// The trait of a contraction that runs tile by tile (OpDesc::tiled). The cut into tiles is a
/// function of the operands' shapes only, and each element of a tile is computed in an order
/// fixed by that cut, so where a tile is placed changes no bit of it: a product run into
/// tiles of scratch gives exactly what its kernel gives.
struct TiledProduct {
  /// Whether these operands run tile by tile: the output is written in its own dtype.
  bool (*fits)(std::span<const Meta> in, const Meta& out);
  TileGeometry (*geometry)(std::span<const Meta> in, const Meta& out);
  /// Computes the product of `in` tile by tile, in parallel, handing every tile to `sink`.
  void (*run)(std::span<const View> in, const Meta& out, const Attrs& attrs, TileSink& sink);
};

/// Places each tile in a contiguous [batches, n, m] array: the op run alone.
class TilesInPlace final : public TileSink {
 public:
  TilesInPlace(const View& c, TileGeometry g) : c_(c), g_(g) {}
  std::byte* place(const OutputTile& t, std::int64_t& ld) override {
    ld = g_.m;
    return c_.data + ((t.batch * g_.n + t.i0) * g_.m + t.j0) * static_cast<std::int64_t>(itemsize(c_.dtype));
  }
  void done(const OutputTile&) override {}

 private:
  View c_;
  TileGeometry g_;
};

}  // namespace lt
