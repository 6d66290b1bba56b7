// The small-product kernels sum each element of C in an order fixed by k alone: the panel
// kernel as one fused multiply-add chain over p = 0, 1, ..., the dot kernel in 16 lanes (lane
// l takes p = l, l + 16, ...) and then a fixed tree of lane sums. Checked bit for bit against
// scalar code that does exactly that, on shapes whose rows and columns fall into every kind
// of register block: so neither the blocking nor the cut into tiles (nor so the thread count)
// can change a bit.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include <lazytensor/ops/kernels/small_gemm.hpp>

namespace lt::test {
namespace {

std::vector<float> random_values(std::int64_t count, std::uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> v(static_cast<std::size_t>(count));
  for (float& x : v) x = u(gen);
  return v;
}

/// One fused multiply-add chain per element, p in order, from +0.
float chain(const float* a, std::int64_t a_step, const float* b, std::int64_t b_step, std::int64_t k) {
  float acc = 0.0f;
  for (std::int64_t p = 0; p < k; ++p) acc = std::fma(a[p * a_step], b[p * b_step], acc);
  return acc;
}

/// 16 lane chains (the masked lanes of the last step add 0 x 0), then lanes l + 8, l + 4,
/// l + 2 and l + 1 added in.
float lanes(const float* a, const float* b, std::int64_t k) {
  float s[16] = {};
  for (std::int64_t p0 = 0; p0 < k; p0 += 16)
    for (std::int64_t l = 0; l < 16; ++l) {
      const std::int64_t p = p0 + l;
      s[l] = p < k ? std::fma(a[p], b[p], s[l]) : std::fma(0.0f, 0.0f, s[l]);
    }
  for (int w = 8; w >= 1; w /= 2)
    for (int l = 0; l < w; ++l) s[l] = s[l] + s[l + w];
  return s[0];
}

bool same_bits(float x, float y) { return std::memcmp(&x, &y, sizeof(float)) == 0; }

TEST(SmallGemmOrder, PanelKernelIsOneChainPerElement) {
  if (!kernels::has_small_gemm) GTEST_SKIP() << "no small-product kernels in this build";
  struct Shape3 { std::int64_t n, k, m; };
  // Rows 1 to 17 and 250 (blocks of 8 and 7, 5 and 5, ...); columns one vector, a ragged few,
  // 64 (two even blocks), and many; k from 1.
  for (Shape3 s : {Shape3{10, 25, 576}, {25, 10, 576}, {250, 20, 64}, {17, 3, 100}, {9, 1, 16}, {7, 33, 47},
                   {5, 8, 80}, {3, 19, 200}, {1, 5, 17}, {128, 50, 320}}) {
    const std::vector<float> a = random_values(s.n * s.k, 1), b = random_values(s.k * s.m, 2);
    // A column-major for n > 8 (as a convolution's input gradient reads the weight), else row-major.
    const std::int64_t a_row = s.n > 8 ? 1 : s.k, a_col = s.n > 8 ? s.n : 1;
    std::vector<float> c(static_cast<std::size_t>(s.n * s.m), NAN);
    ASSERT_TRUE(kernels::small_gemm(a.data(), a_row, a_col, b.data(), s.m, 1, c.data(), s.m, s.n, s.m, s.k));
    for (std::int64_t i = 0; i < s.n; ++i)
      for (std::int64_t j = 0; j < s.m; ++j) {
        const float want = chain(a.data() + i * a_row, a_col, b.data() + j, s.m, s.k);
        ASSERT_TRUE(same_bits(c[static_cast<std::size_t>(i * s.m + j)], want))
            << s.n << " x " << s.k << " x " << s.m << " at (" << i << ", " << j << ")";
      }
  }
}

TEST(SmallGemmOrder, DotKernelSumsSixteenLanesThenATree) {
  if (!kernels::has_small_gemm) GTEST_SKIP() << "no small-product kernels in this build";
  struct Shape3 { std::int64_t n, k, m; };
  // B stored transposed (a linear layer's x w^T, a weight gradient's columns^T): rows and
  // columns in every block size, k whole vectors and ragged.
  for (Shape3 s : {Shape3{10, 2304, 25}, {20, 256, 250}, {64, 131, 10}, {7, 16, 7}, {5, 33, 6}, {128, 320, 50}}) {
    const std::vector<float> a = random_values(s.n * s.k, 3), bt = random_values(s.m * s.k, 4);
    std::vector<float> c(static_cast<std::size_t>(s.n * s.m), NAN);
    ASSERT_TRUE(kernels::small_gemm(a.data(), s.k, 1, bt.data(), 1, s.k, c.data(), s.m, s.n, s.m, s.k));
    for (std::int64_t i = 0; i < s.n; ++i)
      for (std::int64_t j = 0; j < s.m; ++j) {
        const float want = lanes(a.data() + i * s.k, bt.data() + j * s.k, s.k);
        ASSERT_TRUE(same_bits(c[static_cast<std::size_t>(i * s.m + j)], want))
            << s.n << " x " << s.k << " x " << s.m << " at (" << i << ", " << j << ")";
      }
  }
}

}  // namespace
}  // namespace lt::test
