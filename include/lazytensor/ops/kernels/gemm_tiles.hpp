#pragma once
// Products in parallel: a fixed cut of C into tiles, from the shapes alone, run over TBB. Every
// element of C is computed by exactly one tile whose extents do not depend on the thread count,
// so the results are bitwise the same for any number of threads.
#include <algorithm>
#include <cstdint>
#include <limits>

#include "lazytensor/ops/kernels/gemm.hpp"
#include "lazytensor/ops/kernels/parallel.hpp"

namespace lt::kernels {

/// Below about this many multiply-adds a product is one tile: a TBB task costs about a
/// microsecond, this much work about ten.
inline constexpr std::int64_t gemm_tile_macs = std::int64_t{1} << 19;
/// A product is cut into about one tile per this many multiply-adds, up to gemm_max_tiles:
/// enough tiles for every core of a 16-core machine, and for the cores left free when another
/// process takes one (whichever thread is free takes the next tile), yet each large enough
/// that repacking its rows of A and columns of B costs little beside its products.
inline constexpr std::int64_t gemm_cut_macs = std::int64_t{1} << 21;
inline constexpr std::int64_t gemm_max_tiles = 64;
/// No tile edge is cut below this, so that BLAS's register blocks stay full.
inline constexpr std::int64_t gemm_min_edge = 64;
/// Tile edges are multiples of this (SIMD width and BLAS register blocks), so that no tile
/// runs mostly on the kernels' remainder paths.
inline constexpr std::int64_t gemm_tile_align = 16;

/// The cut of an n x m product into row_tiles x col_tiles tiles of rows x cols (smaller at the
/// far edges). Tiles are numbered row-major.
struct GemmTiling {
  std::int64_t n, m, rows, cols, row_tiles, col_tiles;

  std::int64_t count() const { return row_tiles * col_tiles; }
  GemmTile tile(std::int64_t t) const {
    std::int64_t i0 = t / col_tiles * rows, j0 = t % col_tiles * cols;
    return {i0, std::min(rows, n - i0), j0, std::min(cols, m - j0)};
  }
};

/// The tiling of C[n, m] = A[n, k] B[k, m], a function of (n, k, m) only. Row tiles each pack
/// all of B and column tiles all of A, so of the splits that give enough tiles it takes the
/// one that repacks least: a [64, 784] x [784, 1024] product (batch 64) is cut into column
/// tiles, a square one into both.
inline GemmTiling gemm_tiling(std::int64_t n, std::int64_t k, std::int64_t m) {
  auto ceil_div = [](std::int64_t a, std::int64_t b) { return (a + b - 1) / b; };
  const double macs = static_cast<double>(n) * static_cast<double>(k) * static_cast<double>(m);
  const auto want = static_cast<std::int64_t>(
      std::clamp(macs / static_cast<double>(gemm_cut_macs), 1.0, static_cast<double>(gemm_max_tiles)));
  const std::int64_t max_rt = std::max<std::int64_t>(1, n / gemm_min_edge),
                     max_ct = std::max<std::int64_t>(1, m / gemm_min_edge);
  std::int64_t best_rt = 1, best_ct = 1, best_count = 0;
  double best_cost = std::numeric_limits<double>::infinity();
  for (std::int64_t rt = 1; rt <= std::min(want, max_rt); ++rt) {
    std::int64_t ct = std::min(ceil_div(want, rt), max_ct), count = std::min(rt * ct, want);
    double cost = static_cast<double>(rt) * static_cast<double>(m) + static_cast<double>(ct) * static_cast<double>(n);
    if (count > best_count || (count == best_count && cost < best_cost))
      best_rt = rt, best_ct = ct, best_count = count, best_cost = cost;
  }
  auto edge = [&](std::int64_t extent, std::int64_t parts) {
    if (parts <= 1 || extent <= gemm_tile_align) return std::max<std::int64_t>(extent, 1);
    return ceil_div(ceil_div(extent, parts), gemm_tile_align) * gemm_tile_align;
  };
  std::int64_t rows = edge(n, best_rt), cols = edge(m, best_ct);
  return {n, m, rows, cols, std::max<std::int64_t>(1, ceil_div(n, rows)), std::max<std::int64_t>(1, ceil_div(m, cols))};
}

/// Computes tile t of product g into `c`, rows `ldc` apart, instead of into g's own C. The
/// library sees the same operands and extents as for gemm_tile(g, t), so the bits are the same.
template <class T>
void gemm_tile_into(const GemmArgs<T>& g, GemmTile t, T* c, std::int64_t ldc) {
  GemmArgs<T> at = g;
  at.a = g.a + t.i0 * g.a_row;
  at.b = g.b + t.j0 * g.b_col;
  at.c = c;
  at.ldc = ldc;
  at.n = t.rows;
  at.m = t.cols;
  gemm_tile<T>(at, {0, t.rows, 0, t.cols});
}

/// Runs `batches` products of one shape [n, k] x [k, m], tile by tile in parallel.
/// `product_of(bi)` gives the GemmArgs<T> of product bi (its C unused). `place(bi, tile, ldc)`
/// returns where the tile goes (a T*, rows `ldc` apart), and `on_tile(bi, args, tile)` runs
/// right after the tile is computed, on the same thread, while the tile is still in cache: the
/// place for an elementwise epilogue (bias, activation) that must not make a second pass over C.
template <class T, class ProductOf, class Place, class OnTile>
void parallel_gemm_placed(std::int64_t batches, std::int64_t n, std::int64_t k, std::int64_t m, ProductOf&& product_of,
                          Place&& place, OnTile&& on_tile) {
  if (batches <= 0 || n <= 0 || m <= 0) return;
  const GemmTiling tiling = gemm_tiling(n, k, m);
  const std::int64_t tiles = tiling.count();
  // Small products: several per task, so that a task is worth scheduling.
  const double tile_macs = static_cast<double>(tiling.rows) * static_cast<double>(tiling.cols) *
                           static_cast<double>(std::max<std::int64_t>(k, 1));
  const auto grain = static_cast<std::int64_t>(std::max(1.0, static_cast<double>(gemm_tile_macs) / tile_macs));
  parallel_blocks(batches * tiles, grain,
                  [&](std::int64_t begin, std::int64_t end) {
                    for (std::int64_t task = begin; task < end; ++task) {
                      const std::int64_t bi = task / tiles;
                      const GemmArgs<T> g = product_of(bi);
                      const GemmTile t = tiling.tile(task % tiles);
                      std::int64_t ldc = 0;
                      T* c = place(bi, t, ldc);
                      gemm_tile_into<T>(g, t, c, ldc);
                      on_tile(bi, g, t);
                    }
                  });
}

/// parallel_gemm_placed with every tile in its place in g's own C.
template <class T, class ProductOf, class OnTile>
void parallel_gemm(std::int64_t batches, std::int64_t n, std::int64_t k, std::int64_t m, ProductOf&& product_of,
                   OnTile&& on_tile) {
  parallel_gemm_placed<T>(
      batches, n, k, m, product_of,
      [&](std::int64_t bi, GemmTile t, std::int64_t& ldc) {
        const GemmArgs<T> g = product_of(bi);
        ldc = g.ldc;
        return g.c + t.i0 * g.ldc + t.j0;
      },
      on_tile);
}

template <class T, class ProductOf>
void parallel_gemm(std::int64_t batches, std::int64_t n, std::int64_t k, std::int64_t m, ProductOf&& product_of) {
  parallel_gemm<T>(batches, n, k, m, product_of, [](std::int64_t, const GemmArgs<T>&, GemmTile) {});
}

}  // namespace lt::kernels
