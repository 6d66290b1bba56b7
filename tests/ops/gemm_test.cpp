// GEMM kernels: the fixed cut into tiles, CBLAS and Eigen against a plain loop on every operand
// layout, results that do not depend on the thread count, and the library named in the metrics
// report.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/task_arena.h>

#include <lazytensor/lazytensor.hpp>
#include <lazytensor/ops/kernel_levels.hpp>
#include <lazytensor/ops/kernels/gemm_tiles.hpp>

namespace lt::test {
namespace {

using kernels::GemmArgs;
using kernels::GemmLibrary;

/// The code paths this build can run: each library forced, and the automatic choice.
std::vector<GemmLibrary> libraries() {
  std::vector<GemmLibrary> all{GemmLibrary::automatic, GemmLibrary::eigen};
#ifdef LAZYTENSOR_HAVE_CBLAS
  all.push_back(GemmLibrary::cblas);
#endif
  if (kernels::has_small_gemm) all.push_back(GemmLibrary::small);
  return all;
}
const char* name(GemmLibrary l) {
  switch (l) {
    case GemmLibrary::automatic: return "automatic";
    case GemmLibrary::small: return "small-product kernels";
    case GemmLibrary::cblas: return "cblas";
    default: return "eigen";
  }
}

/// Runs f with `threads` threads: an arena of that size, the global limit raised to match.
template <class F>
void with_threads(int threads, F&& f) {
  tbb::global_control limit(tbb::global_control::max_allowed_parallelism, static_cast<std::size_t>(threads));
  tbb::task_arena arena(threads);
  arena.execute(f);
}

TEST(GemmTiling, EveryElementOfCInExactlyOneTile) {
  struct Shape3 { std::int64_t n, k, m; };
  for (Shape3 s : {Shape3{64, 784, 1024}, {64, 1024, 10}, {2048, 2048, 2048}, {1, 4096, 4096}, {4096, 4096, 1},
                   {300, 77, 40}, {129, 257, 130}, {17, 1000, 33}, {3, 4, 5}, {100, 0, 100}}) {
    kernels::GemmTiling t = kernels::gemm_tiling(s.n, s.k, s.m);
    std::vector<int> hits(static_cast<std::size_t>(s.n * s.m), 0);
    for (std::int64_t q = 0; q < t.count(); ++q) {
      kernels::GemmTile tile = t.tile(q);
      ASSERT_GT(tile.rows, 0);
      ASSERT_GT(tile.cols, 0);
      for (std::int64_t i = tile.i0; i < tile.i0 + tile.rows; ++i)
        for (std::int64_t j = tile.j0; j < tile.j0 + tile.cols; ++j) ++hits[static_cast<std::size_t>(i * s.m + j)];
    }
    for (int h : hits) ASSERT_EQ(h, 1) << s.n << " x " << s.k << " x " << s.m;
    EXPECT_LE(t.count(), kernels::gemm_max_tiles);
  }
}

TEST(GemmTiling, LargeProductsUseSeveralCoresSmallOnesOneTask) {
  // Batch 64 (W3's first layer): too few rows to share, so the columns are cut.
  kernels::GemmTiling w3 = kernels::gemm_tiling(64, 784, 1024);
  EXPECT_EQ(w3.row_tiles, 1);
  EXPECT_GE(w3.col_tiles, 4);
  EXPECT_EQ(w3.cols % kernels::gemm_tile_align, 0);
  kernels::GemmTiling square = kernels::gemm_tiling(2048, 2048, 2048);
  EXPECT_GT(square.row_tiles, 1);
  EXPECT_GT(square.col_tiles, 1);
  EXPECT_EQ(kernels::gemm_tiling(64, 1024, 10).count(), 1);  // W3's last layer: too little work
  EXPECT_EQ(kernels::gemm_tiling(8, 8, 8).count(), 1);
}

TEST(GemmTiling, LargeProductsAreCutForSixteenCores) {
  // The cut follows the shapes alone: enough tiles for every core of a 16-core machine.
  EXPECT_GE(kernels::gemm_tiling(4096, 4096, 4096).count(), 16);
  EXPECT_GE(kernels::gemm_tiling(2048, 2048, 2048).count(), 16);
  EXPECT_GE(kernels::gemm_tiling(512, 512, 512).count(), 16);
  EXPECT_GT(kernels::gemm_tiling(2048, 2048, 2048).count(), 8) << "no longer capped at 8 tiles";
  for (auto [n, m] : {std::pair<std::int64_t, std::int64_t>{4096, 4096}, {64, 1024}, {256, 2048}}) {
    const kernels::GemmTiling t = kernels::gemm_tiling(n, 1024, m);
    EXPECT_TRUE(t.row_tiles == 1 || t.rows >= kernels::gemm_min_edge) << n << " x " << m;
    EXPECT_TRUE(t.col_tiles == 1 || t.cols >= kernels::gemm_min_edge) << n << " x " << m;
  }
}

TEST(GemmLayout, UnitStrideInOneDimOrPacked) {
  using kernels::matrix_layout;
  EXPECT_TRUE(matrix_layout(3, 4, 4, 1).ok && !matrix_layout(3, 4, 4, 1).col_major);
  EXPECT_EQ(matrix_layout(3, 4, 7, 1).ld, 7);
  EXPECT_TRUE(matrix_layout(3, 4, 1, 3).ok && matrix_layout(3, 4, 1, 3).col_major);
  EXPECT_FALSE(matrix_layout(3, 4, 8, 2).ok);  // neither stride is 1
  EXPECT_FALSE(matrix_layout(3, 4, 0, 1).ok);  // broadcast rows: BLAS needs ld >= cols
  EXPECT_TRUE(matrix_layout(1, 4, 0, 1).ok);   // one row: its stride is free
  EXPECT_TRUE(matrix_layout(1, 4, 0, 5).ok);   // one strided row is a column-major 1 x 4
  EXPECT_TRUE(matrix_layout(4, 1, 9, 0).ok);
}

/// How a test operand is stored.
enum class Layout { row_major, col_major, strided, broadcast_rows };
const char* name(Layout l) {
  switch (l) {
    case Layout::row_major: return "row-major";
    case Layout::col_major: return "column-major";
    case Layout::strided: return "strided";
    default: return "broadcast rows";
  }
}

/// A rows x cols operand with padded leading dims (or none of unit stride, or stride-0 rows).
template <class T>
struct Operand {
  std::vector<T> buf;
  std::int64_t rs = 0, cs = 0;
  Operand(std::int64_t rows, std::int64_t cols, Layout l, std::uint32_t seed) {
    switch (l) {
      case Layout::row_major: rs = cols + 3, cs = 1; break;
      case Layout::col_major: rs = 1, cs = rows + 5; break;
      case Layout::strided: rs = 2 * cols + 1, cs = 2; break;
      case Layout::broadcast_rows: rs = 0, cs = 1; break;
    }
    std::int64_t span = 1 + std::max<std::int64_t>(rows - 1, 0) * rs + std::max<std::int64_t>(cols - 1, 0) * cs;
    std::mt19937 gen(seed);
    std::uniform_real_distribution<double> u(-1, 1);
    buf.resize(static_cast<std::size_t>(span));
    for (T& x : buf) x = static_cast<T>(u(gen));
  }
  T at(std::int64_t i, std::int64_t j) const { return buf[static_cast<std::size_t>(i * rs + j * cs)]; }
};

/// C = A B by a plain loop in long double, and for each element the bound sum |a||b|.
template <class T>
void reference(const Operand<T>& a, const Operand<T>& b, std::int64_t n, std::int64_t k, std::int64_t m,
               std::vector<long double>& c, std::vector<long double>& mag) {
  c.assign(static_cast<std::size_t>(n * m), 0), mag.assign(static_cast<std::size_t>(n * m), 0);
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < m; ++j)
      for (std::int64_t p = 0; p < k; ++p) {
        long double x = static_cast<long double>(a.at(i, p)) * static_cast<long double>(b.at(p, j));
        c[static_cast<std::size_t>(i * m + j)] += x;
        mag[static_cast<std::size_t>(i * m + j)] += std::fabs(x);
      }
}

template <class T>
std::vector<T> run_gemm(const Operand<T>& a, const Operand<T>& b, std::int64_t batches, std::int64_t n, std::int64_t k,
                        std::int64_t m, GemmLibrary lib) {
  // NaN in C first: a product must write every element, never read what was there.
  std::vector<T> c(static_cast<std::size_t>(batches * n * m), std::numeric_limits<T>::quiet_NaN());
  kernels::parallel_gemm<T>(batches, n, k, m, [&](std::int64_t bi) {
    return GemmArgs<T>{a.buf.data(), a.rs, a.cs, b.buf.data(), b.rs, b.cs, c.data() + bi * n * m, m, n, k, m, lib};
  });
  return c;
}

/// Every library of the build against the loop, on two batches that share the operands.
template <class T>
void check_against_loop(std::int64_t n, std::int64_t k, std::int64_t m, Layout la, Layout lb) {
  Operand<T> a(n, k, la, 1), b(k, m, lb, 2);
  std::vector<long double> ref, mag;
  reference(a, b, n, k, m, ref, mag);
  const long double eps = std::numeric_limits<T>::epsilon();
  for (GemmLibrary lib : libraries()) {
    std::vector<T> c = run_gemm(a, b, 2, n, k, m, lib);
    for (std::int64_t q = 0; q < 2 * n * m; ++q) {
      std::size_t e = static_cast<std::size_t>(q % (n * m));
      long double tol = static_cast<long double>(k + 2) * eps * mag[e] + std::numeric_limits<T>::min();
      ASSERT_LE(std::fabs(static_cast<long double>(c[static_cast<std::size_t>(q)]) - ref[e]), tol)
          << name(lib) << " " << n << " x " << k << " x " << m << ", A " << name(la) << ", B " << name(lb)
          << ", element " << q;
    }
  }
}

TEST(GemmKernel, MatchesAPlainLoopOnEveryLayout) {
  const Layout all[] = {Layout::row_major, Layout::col_major, Layout::strided, Layout::broadcast_rows};
  struct Shape3 { std::int64_t n, k, m; };
  // Tiny; cut into row tiles; a row times many columns (k odd); cut both ways with ragged
  // edges; an empty sum.
  for (Shape3 s : {Shape3{3, 4, 5}, {300, 77, 48}, {1, 33, 1000}, {129, 129, 130}, {5, 0, 7}})
    for (Layout la : all)
      for (Layout lb : all) {
        check_against_loop<float>(s.n, s.k, s.m, la, lb);
        if (s.n * s.k * s.m < 1000000) check_against_loop<double>(s.n, s.k, s.m, la, lb);
      }
}

/// W4's convolution products, per image or per run of images: the weight times the columns,
/// its transpose times the output gradient, the gradient times the columns transposed (long k).
TEST(GemmKernel, MatchesAPlainLoopOnConvolutionShapes) {
  check_against_loop<float>(20, 250, 64, Layout::row_major, Layout::row_major);
  check_against_loop<float>(10, 25, 576, Layout::row_major, Layout::row_major);
  check_against_loop<float>(250, 20, 64, Layout::col_major, Layout::row_major);
  check_against_loop<float>(20, 512, 250, Layout::row_major, Layout::col_major);
  check_against_loop<float>(10, 4608, 25, Layout::row_major, Layout::col_major);
}

TEST(GemmKernel, MatchesAPlainLoopOnW3Shapes) {
  check_against_loop<float>(64, 131, 1024, Layout::row_major, Layout::col_major);  // linear: x w^T
  check_against_loop<float>(64, 131, 1024, Layout::row_major, Layout::row_major);
  check_against_loop<float>(64, 1024, 10, Layout::row_major, Layout::col_major);
  check_against_loop<double>(64, 131, 1024, Layout::row_major, Layout::col_major);
}

TEST(GemmKernel, SameBitsForAnyThreadCount) {
  struct Shape3 { std::int64_t batches, n, k, m; };
  for (GemmLibrary lib : libraries())
    for (Shape3 s : {Shape3{1, 64, 784, 1024}, {1, 300, 77, 520}, {3, 129, 257, 130}, {50, 8, 9, 10}, {1, 512, 512, 512}}) {
      Operand<float> a(s.n, s.k, Layout::row_major, 3), b(s.k, s.m, Layout::col_major, 4);
      std::vector<float> one;
      with_threads(1, [&] { one = run_gemm(a, b, s.batches, s.n, s.k, s.m, lib); });
      for (int threads : {2, 3, 8, 16}) {  // 512^3 is cut 16 ways or more (LargeProductsAreCutForSixteenCores)
        std::vector<float> many;
        with_threads(threads, [&] { many = run_gemm(a, b, s.batches, s.n, s.k, s.m, lib); });
        ASSERT_EQ(many.size(), one.size());
        EXPECT_EQ(std::memcmp(many.data(), one.data(), one.size() * sizeof(float)), 0)
            << name(lib) << " " << s.n << " x " << s.k << " x " << s.m << " differs at " << threads << " threads";
      }
    }
}

TEST(GemmKernel, EpilogueSeesEachTileOnceAfterItIsComputed) {
  const std::int64_t n = 64, k = 100, m = 1024;
  Operand<float> a(n, k, Layout::row_major, 5), b(k, m, Layout::row_major, 6);
  // The product alone, by the library the tiles below choose (GemmArgs' default).
  std::vector<float> c(static_cast<std::size_t>(n * m)), expected = run_gemm(a, b, 1, n, k, m, GemmLibrary::automatic);
  std::vector<int> seen(static_cast<std::size_t>(n * m), 0);
  kernels::parallel_gemm<float>(
      1, n, k, m, [&](std::int64_t) { return GemmArgs<float>{a.buf.data(), a.rs, a.cs, b.buf.data(), b.rs, b.cs, c.data(), m, n, k, m}; },
      [&](std::int64_t, const GemmArgs<float>& g, kernels::GemmTile t) {
        for (std::int64_t i = t.i0; i < t.i0 + t.rows; ++i)
          for (std::int64_t j = t.j0; j < t.j0 + t.cols; ++j) {
            float& x = g.c[i * g.ldc + j];
            x = std::max(x, 0.0f);  // relu as the epilogue
            ++seen[static_cast<std::size_t>(i * m + j)];
          }
      });
  for (int s : seen) ASSERT_EQ(s, 1);
  for (std::size_t e = 0; e < c.size(); ++e) ASSERT_EQ(c[e], std::max(expected[e], 0.0f)) << e;
}

/// torch.matmul by a loop, for the op-level cases: both operands expanded to c's batch dims
/// and read back as contiguous values.
std::vector<double> matmul_loop(const Tensor& a, const Tensor& b, const Tensor& c) {
  Shape sa = c.shape(), sb = c.shape();
  std::int64_t n = a.size(-2), k = a.size(-1), m = b.size(-1);
  sa[sa.rank() - 1] = k;
  sb[sb.rank() - 2] = k;
  std::vector<float> va = a.expand(sa).contiguous().to_vector<float>(), vb = b.expand(sb).contiguous().to_vector<float>();
  std::vector<double> out;
  for (std::int64_t q = 0; q < c.numel() / (n * m); ++q)
    for (std::int64_t i = 0; i < n; ++i)
      for (std::int64_t j = 0; j < m; ++j) {
        double acc = 0;
        for (std::int64_t p = 0; p < k; ++p)
          acc += static_cast<double>(va[static_cast<std::size_t>((q * n + i) * k + p)]) *
                 vb[static_cast<std::size_t>((q * k + p) * m + j)];
        out.push_back(acc);
      }
  return out;
}

/// Op-level products: each case builds its operands (views included) on the lazy device.
struct MatmulCase {
  const char* what;
  std::function<std::pair<Tensor, Tensor>()> operands;
};
std::vector<MatmulCase> matmul_cases() {
  return {
      {"linear, batch 64", [] { return std::pair{randn({64, 784}, device()), randn({1024, 784}, device()).t()}; }},
      {"many rows, odd k", [] { return std::pair{randn({517, 63}, device()), randn({63, 45}, device())}; }},
      {"transposed and sliced", [] {
         Tensor a = randn({90, 200}, device()).slice(1, 0, std::nullopt, 2).t();  // [100, 90], no unit stride
         return std::pair{a, randn({90, 130}, device()).slice(1, 1, 129)};
       }},
      {"batched broadcast", [] { return std::pair{randn({3, 1, 70, 33}, device()), randn({5, 33, 96}, device())}; }},
  };
}

TEST(GemmMatmul, MatchesAPlainLoopAndKeepsItsBitsForAnyThreadCount) {
  for (const MatmulCase& mc : matmul_cases()) {
    std::vector<float> one;
    for (int threads : {1, 2, 3, 8})
      with_threads(threads, [&] {
        manual_seed(11);
        auto [a, b] = mc.operands();
        Tensor c = matmul(a, b);
        sync();
        std::vector<float> got = c.to_vector<float>();
        if (threads == 1) {
          one = got;
          std::vector<double> ref = matmul_loop(a, b, c);
          ASSERT_EQ(got.size(), ref.size()) << mc.what;
          for (std::size_t e = 0; e < ref.size(); ++e)
            ASSERT_NEAR(got[e], ref[e], 1e-4 * (1 + std::fabs(ref[e]))) << mc.what << ", element " << e;
        } else {
          ASSERT_EQ(got.size(), one.size());
          EXPECT_EQ(std::memcmp(got.data(), one.data(), one.size() * sizeof(float)), 0) << mc.what << " at " << threads << " threads";
        }
      });
  }
}

#if defined(LAZYTENSOR_HAVE_CBLAS) && defined(OPENBLAS_VERSION)
TEST(GemmMatmul, OpenBlasThreadsSetByTheProgramDoNotChangeTheBits) {
  // Through OpenBLAS itself, whichever code the build would choose for this product.
  Operand<float> a(64, 784, Layout::row_major, 12), b(784, 1024, Layout::col_major, 13);
  auto product = [&] { return run_gemm(a, b, 1, 64, 784, 1024, GemmLibrary::cblas); };
  openblas_set_num_threads(1);
  std::vector<float> one = product();
  openblas_set_num_threads(2);  // as a program using OpenBLAS for itself might
  std::vector<float> two = product();
  EXPECT_EQ(openblas_get_num_threads(), 1) << "products keep OpenBLAS on the calling thread";
  EXPECT_EQ(std::memcmp(one.data(), two.data(), one.size() * sizeof(float)), 0);
}
#endif

TEST(GemmBackend, NamedInTheMetricsReport) {
#if defined(LAZYTENSOR_HAVE_CBLAS) && defined(OPENBLAS_VERSION)
  const std::string library = "OpenBLAS ";
#elif defined(LAZYTENSOR_HAVE_CBLAS)
  const std::string library = "CBLAS";
#else
  const std::string library = "Eigen ";
#endif
  // The running level's products: OpenBLAS's kernels may be narrower than the level's, which
  // then uses Eigen's GEMM (gemm.hpp says when).
  const LevelKernels& running = running_kernels();
  const std::string backend = metrics::info("GemmBackend");
  EXPECT_EQ(backend, running.gemm_backend());
#if defined(LAZYTENSOR_HAVE_CBLAS) && defined(OPENBLAS_VERSION)
  const bool wide = kernels::blas_core_is_as_wide(kernels::cblas::core_name(), running.level);
  EXPECT_EQ(backend.rfind(wide ? library : "Eigen ", 0), 0u) << backend;
  if (!wide) EXPECT_NE(backend.find("in place of " + kernels::cblas::name()), std::string::npos) << backend;
#else
  EXPECT_EQ(backend.rfind(library, 0), 0u) << backend;
#endif
  EXPECT_EQ(backend.find("small f32 products") != std::string::npos, running.level >= CpuCapability::avx512) << backend;
  EXPECT_EQ(metrics::info("CpuCapability").rfind(std::string(capability_name(running.level)) + " (CPU: ", 0), 0u)
      << metrics::info("CpuCapability");
  metrics::reset();  // a fact, not a count: it stays
  std::string r = metrics::report();
  EXPECT_NE(r.find("Info: GemmBackend\n  Value: " + backend), std::string::npos) << r;
}

TEST(GemmBackend, GenericOpenBlasKernelsAreNotUsedAboveTheirWidth) {
  EXPECT_FALSE(kernels::blas_core_is_as_wide("prescott", CpuCapability::avx2));
  EXPECT_FALSE(kernels::blas_core_is_as_wide("haswell", CpuCapability::avx512));
  EXPECT_FALSE(kernels::blas_core_is_as_wide("prescott", CpuCapability::avx512_bf16));
  EXPECT_TRUE(kernels::blas_core_is_as_wide("haswell", CpuCapability::avx2));
  EXPECT_TRUE(kernels::blas_core_is_as_wide("sapphirerapids", CpuCapability::avx512_bf16));
  EXPECT_TRUE(kernels::blas_core_is_as_wide("prescott", CpuCapability::v2));
}

}  // namespace
}  // namespace lt::test
