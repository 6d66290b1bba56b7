#pragma once
// Matrix products on strided operands, one tile of C at a time on the calling thread: small f32
// products by register-blocked kernels (small_gemm.hpp), other floating ones by CBLAS where the
// build found one (LAZYTENSOR_HAVE_CBLAS), else Eigen's GEMM; a plain loop for integers.
// gemm_tiles.hpp cuts a product into tiles and runs them in parallel.
#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <Eigen/Core>

#include "lazytensor/core/cpu_capability.hpp"
#include "lazytensor/core/metrics.hpp"
#include "lazytensor/ops/kernels/cblas.hpp"
#include "lazytensor/ops/kernels/gemm_bf16.hpp"
#include "lazytensor/ops/kernels/small_gemm.hpp"

namespace lt::kernels {

/// A matrix operand as GEMM libraries take it: one dim with unit stride (row-major: the
/// columns; column-major: the rows) and a leading dimension `ld` that keeps the other apart.
struct MatrixLayout {
  bool ok = false;         // false: neither stride is 1 (or ld is too small); pack it first
  bool col_major = false;  // in row-major BLAS terms: stored transposed
  std::int64_t ld = 1;
};

/// The layout of a rows x cols operand with element strides rs and cs. The stride of an
/// extent-1 dim never moves the pointer, so it is chosen to make the operand fit.
inline MatrixLayout matrix_layout(std::int64_t rows, std::int64_t cols, std::int64_t rs, std::int64_t cs) {
  if (rows <= 1) rs = cs == 1 ? std::max<std::int64_t>(cols, 1) : 1;
  if (cols <= 1) cs = rs == 1 ? std::max<std::int64_t>(rows, 1) : 1;
  if (cs == 1 && rs >= std::max<std::int64_t>(cols, 1)) return {true, false, rs};
  if (rs == 1 && cs >= std::max<std::int64_t>(rows, 1)) return {true, true, cs};
  return {};
}

/// Which code computes floating products. CBLAS is there only when the build found one; Eigen
/// always is; the small-product kernels (small_gemm.hpp) in AVX-512 builds. `automatic` takes
/// the small-product kernels for f32 tiles whose B fits in L2, where they are faster than a
/// general GEMM's packing and blocking, and preferred_gemm_library() for the rest; the others
/// force one (tests compare them; `small` falls back to Eigen where its kernels do not fit).
enum class GemmLibrary { automatic, small, cblas, eigen };

/// Whether OpenBLAS's kernels (`core`, as core_name() gives it) are as wide as this copy of
/// lazytensor's: an AVX-512 copy wants OpenBLAS's AVX-512 kernels, an AVX2 copy its AVX2 ones
/// or wider. OpenBLAS picks its kernels when it loads, from the CPUs it knows: on a newer CPU
/// (Debian's 0.3.21 gives Zen 4 its Haswell kernels and some Xeons their generic Prescott ones)
/// they are narrower than the CPU's units, and a process cannot change them afterwards.
inline bool blas_core_is_as_wide(std::string_view core, CpuCapability level) {
  constexpr std::string_view avx512_cores[] = {"skylakex", "cooperlake", "sapphirerapids"};
  constexpr std::string_view avx2_cores[] = {"haswell", "zen", "skylakex", "cooperlake", "sapphirerapids"};
  auto among = [&](const auto& cores) {
    for (std::string_view c : cores)
      if (core == c) return true;
    return false;
  };
  if (level >= CpuCapability::avx512) return among(avx512_cores);
  if (level >= CpuCapability::avx2) return among(avx2_cores);
  return true;
}

/// CBLAS where the build found one, unless OpenBLAS runs narrower kernels than this copy of
/// lazytensor's on the CPU (blas_core_is_as_wide): Eigen's GEMM, compiled at this copy's
/// level, is then the faster (benchmarks/README.md). Decided from the level and OpenBLAS's
/// core name alone, never from a timing, and fixed for the life of the process, so results do
/// not change from one product to the next; one choice per capability level (`Level`), whose
/// copies of this function differ.
template <int Level = LT_COMPILED_LEVEL>
GemmLibrary preferred_gemm_library() {
#if defined(LAZYTENSOR_HAVE_CBLAS) && defined(OPENBLAS_VERSION)
  static const GemmLibrary library =
      blas_core_is_as_wide(cblas::core_name(), static_cast<CpuCapability>(Level)) ? GemmLibrary::cblas : GemmLibrary::eigen;
  return library;
#elif defined(LAZYTENSOR_HAVE_CBLAS)
  return GemmLibrary::cblas;
#else
  return GemmLibrary::eigen;
#endif
}

/// One product C[n, m] = A[n, k] B[k, m]: A and B by element strides, C with unit column
/// stride and row stride ldc.
template <class T>
struct GemmArgs {
  const T* a;
  std::int64_t a_row, a_col;
  const T* b;
  std::int64_t b_row, b_col;
  T* c;
  std::int64_t ldc;
  std::int64_t n, k, m;
  GemmLibrary library = GemmLibrary::automatic;
};

/// The bytes of B a tile may span for the small-product kernels: they read all of B again for
/// every few rows of A, so B must stay in L2.
inline constexpr std::int64_t small_gemm_b_bytes = std::int64_t{512} << 10;

/// A block of C: rows [i0, i0 + rows), columns [j0, j0 + cols).
struct GemmTile {
  std::int64_t i0, rows, j0, cols;
};

namespace detail {

template <class T, int Order>
using GemmMap = Eigen::Map<const Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Order>, 0, Eigen::OuterStride<>>;

/// Eigen's GEMM on operands in BLAS layout: single-threaded (Eigen threads only with OpenMP).
template <class T>
void eigen_gemm(MatrixLayout la, MatrixLayout lb, std::int64_t rows, std::int64_t cols, std::int64_t k, const T* a,
                const T* b, T* c, std::int64_t ldc) {
  using RowMajor = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  Eigen::Map<RowMajor, 0, Eigen::OuterStride<>> C(c, rows, cols, Eigen::OuterStride<>(ldc));
  auto times_b = [&](const auto& A) {
    if (lb.col_major) C.noalias() = A * GemmMap<T, Eigen::ColMajor>(b, k, cols, Eigen::OuterStride<>(lb.ld));
    else C.noalias() = A * GemmMap<T, Eigen::RowMajor>(b, k, cols, Eigen::OuterStride<>(lb.ld));
  };
  if (la.col_major) times_b(GemmMap<T, Eigen::ColMajor>(a, rows, k, Eigen::OuterStride<>(la.ld)));
  else times_b(GemmMap<T, Eigen::RowMajor>(a, rows, k, Eigen::OuterStride<>(la.ld)));
}

/// A contiguous row-major copy of a rows x cols strided block (for an operand GEMM cannot read).
template <class T>
const T* pack(const T* p, std::int64_t rows, std::int64_t cols, std::int64_t rs, std::int64_t cs, std::vector<T>& buf) {
  buf.resize(static_cast<std::size_t>(rows * cols));
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = 0; j < cols; ++j) buf[static_cast<std::size_t>(i * cols + j)] = p[i * rs + j * cs];
  return buf.data();
}

}  // namespace detail

/// Computes one tile of C on the calling thread. Each element of the tile is a sum over k in
/// an order fixed by the tile's extents and the backend alone, so a fixed cut into tiles gives
/// the same bits whichever thread runs which tile.
template <class T>
void gemm_tile(const GemmArgs<T>& g, GemmTile t) {
  if (t.rows <= 0 || t.cols <= 0) return;
  const T* a = g.a + t.i0 * g.a_row;
  const T* b = g.b + t.j0 * g.b_col;
  T* c = g.c + t.i0 * g.ldc + t.j0;
  if (g.k == 0) {  // an empty sum; BLAS would also reject the leading dims
    for (std::int64_t i = 0; i < t.rows; ++i) std::fill_n(c + i * g.ldc, t.cols, T(0));
    return;
  }
  if constexpr (std::is_floating_point_v<T>) {
    if constexpr (std::is_same_v<T, float>)
      if (g.library == GemmLibrary::small ||
          (g.library == GemmLibrary::automatic && g.k * t.cols * static_cast<std::int64_t>(sizeof(T)) <= small_gemm_b_bytes))
        if (small_gemm(a, g.a_row, g.a_col, b, g.b_row, g.b_col, c, g.ldc, t.rows, t.cols, g.k)) return;
    MatrixLayout la = matrix_layout(t.rows, g.k, g.a_row, g.a_col), lb = matrix_layout(g.k, t.cols, g.b_row, g.b_col);
    std::vector<T> pa, pb;
    if (!la.ok) {
      a = detail::pack(a, t.rows, g.k, g.a_row, g.a_col, pa);
      la = {true, false, g.k};
    }
    if (!lb.ok) {
      b = detail::pack(b, g.k, t.cols, g.b_row, g.b_col, pb);
      lb = {true, false, t.cols};
    }
#ifdef LAZYTENSOR_HAVE_CBLAS
    const GemmLibrary library = g.library == GemmLibrary::automatic ? preferred_gemm_library() : g.library;
    if (library == GemmLibrary::cblas && cblas::fits(t.rows) && cblas::fits(t.cols) && cblas::fits(g.k) && cblas::fits(la.ld) && cblas::fits(lb.ld) &&
        cblas::fits(g.ldc)) {
      cblas::run_on_caller_thread();
      cblas::gemm(la.col_major, lb.col_major, t.rows, t.cols, g.k, a, la.ld, b, lb.ld, c, g.ldc);
      return;
    }
#endif
    detail::eigen_gemm<T>(la, lb, t.rows, t.cols, g.k, a, b, c, g.ldc);
  } else {
    for (std::int64_t i = 0; i < t.rows; ++i)
      for (std::int64_t j = 0; j < t.cols; ++j) {
        T acc = 0;
        for (std::int64_t p = 0; p < g.k; ++p) acc += a[i * g.a_row + p * g.a_col] * b[p * g.b_row + j * g.b_col];
        c[i * g.ldc + j] = acc;
      }
  }
}

/// C[n, m] (contiguous) = A[n, k] * B[k, m] on the calling thread, A and B by element strides.
template <class T>
void gemm(const T* a, std::int64_t a_row, std::int64_t a_col, const T* b, std::int64_t b_row, std::int64_t b_col,
          T* c, std::int64_t n, std::int64_t k, std::int64_t m) {
  gemm_tile<T>({a, a_row, a_col, b, b_row, b_col, c, m, n, k, m}, {0, n, 0, m});
}

/// The library that computes floating products, as the metrics report names it.
inline std::string gemm_backend() {
  std::string eigen = "Eigen " + std::to_string(EIGEN_WORLD_VERSION) + "." + std::to_string(EIGEN_MAJOR_VERSION) + "." +
                      std::to_string(EIGEN_MINOR_VERSION);
#ifdef LAZYTENSOR_HAVE_CBLAS
  const std::string general =
      preferred_gemm_library() == GemmLibrary::cblas
          ? cblas::name()
          : eigen + ", " + std::string(capability_name(compiled_capability())) + " (in place of " + cblas::name() +
                ", narrower than this CPU's units)";
#else
  const std::string general = eigen;
#endif
  return (has_small_gemm ? general + "; small f32 products: lazytensor's AVX-512 kernels" : general) + "; " +
         bf16_gemm_name();
}

}  // namespace lt::kernels
