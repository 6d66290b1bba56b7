// bf16 products: matmul and conv2d take bf16 operands as stored, on AVX512-BF16 where the CPU
// has it (LT_BF16_GEMM=plain: widened to f32), accumulate in f32 and round once; so do
// conv2d's gradients. CTest runs these cases on both paths (tests/ops/CMakeLists.txt).
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <random>
#include <utility>
#include <vector>

#include <lazytensor/lazytensor.hpp>
#include <lazytensor/ops/kernels/gemm_bf16.hpp>

namespace lt {
namespace {

class Bf16ProductsOnDevice : public ::testing::TestWithParam<Device> {};

/// A[n, k] B[k, m] in double from the bf16 values (exact products; a sum of k of them).
std::vector<double> product_reference(const std::vector<float>& a, const std::vector<float>& b, int n, int k, int m) {
  std::vector<double> c(static_cast<std::size_t>(n * m), 0.0);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < m; ++j)
      for (int p = 0; p < k; ++p) c[static_cast<std::size_t>(i * m + j)] += double(a[static_cast<std::size_t>(i * k + p)]) * b[static_cast<std::size_t>(p * m + j)];
  return c;
}

TEST_P(Bf16ProductsOnDevice, ProductsAccumulateInF32AndRoundOnce) {
  const Device dev = GetParam();
  // Shapes past every edge of the AVX512-BF16 kernel: odd k, columns not a multiple of 16,
  // rows not a multiple of 8, more than one block of k and of columns; past 256 rows, B is
  // packed from either layout.
  for (auto [n, k, m] : {std::array{1, 1, 1}, {3, 5, 7}, {9, 33, 17}, {70, 515, 300}, {16, 2, 33}, {260, 67, 40}}) {
    manual_seed(static_cast<std::uint64_t>(n * 1000 + k));
    Tensor a = randn({n, k}, cpu, bf16), b = randn({k, m}, cpu, bf16);
    const std::vector<float> av = a.to_vector<float>(), bv = b.to_vector<float>();
    const std::vector<double> want = product_reference(av, bv, n, k, m);
    double scale = 0;  // sum of |a||b| along k bounds the accumulation's error
    for (int p = 0; p < k; ++p) scale = std::max(scale, std::abs(double(av[static_cast<std::size_t>(p)])));
    for (bool transposed : {false, true}) {
      Tensor bb = transposed ? b.t().contiguous().t() : b;  // B read along its rows' stride
      Tensor c = matmul(a.to(dev), bb.to(dev));
      ASSERT_EQ(c.dtype(), bf16);
      const std::vector<float> got = c.to_vector<float>();
      Tensor c32 = matmul(a.to(dev), bb.to(dev).to(f32));  // promoted: f32, no rounding at the end
      const std::vector<float> got32 = c32.to_vector<float>();
      for (std::size_t e = 0; e < want.size(); ++e) {
        const double accumulation = 1e-5 * 4 * k;  // |a|, |b| mostly below 4: f32 sums of k terms
        ASSERT_NEAR(got[e], want[e], std::abs(want[e]) / 256 + accumulation) << n << "x" << k << "x" << m << " at " << e;
        ASSERT_NEAR(got32[e], want[e], accumulation) << n << "x" << k << "x" << m << " at " << e;
      }
    }
  }
}

TEST(Bf16Products, DotKernelMatchesTheWidenedPath) {
  if (!kernels::cpu_has_avx512_bf16()) GTEST_SKIP() << "this CPU has no AVX512-BF16";
  const int n = 37, k = 129, m = 45;
  std::mt19937 gen(5);
  std::vector<bfloat16> a(n * k), b(k * m);
  for (auto& x : a) x = bfloat16(std::uniform_real_distribution<float>(-2, 2)(gen));
  for (auto& x : b) x = bfloat16(std::uniform_real_distribution<float>(-2, 2)(gen));
  std::vector<float> c(n * m, -1.0f);
  kernels::gemm_bf16({a.data(), k, 1, b.data(), m, 1, c.data(), m, n, k, m});
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < m; ++j) {
      double want = 0;
      for (int p = 0; p < k; ++p) want += double(float(a[i * k + p])) * float(b[p * m + j]);
      ASSERT_NEAR(c[i * m + j], want, 1e-5 * k * 4) << i << ", " << j;
    }
}

TEST_P(Bf16ProductsOnDevice, ConvolutionsAndPoolsTakeBf16) {
  const Device dev = GetParam();
  manual_seed(4);
  Tensor x = randn({2, 3, 8, 8}, dev, bf16), w = randn({4, 3, 3, 3}, dev, bf16);
  Tensor y = max_pool2d(conv2d(x, w, std::nullopt, 1, 1), 2);
  ASSERT_EQ(y.dtype(), bf16);
  Tensor y32 = max_pool2d(conv2d(x.to(f32), w.to(f32), std::nullopt, 1, 1), 2);
  const std::vector<float> got = y.to_vector<float>(), want = y32.to_vector<float>();
  for (std::size_t k = 0; k < got.size(); ++k) EXPECT_NEAR(got[k], want[k], std::abs(want[k]) / 128 + 1e-3) << k;
}

TEST_P(Bf16ProductsOnDevice, ConvolutionGradientsTakeBf16) {
  const Device dev = GetParam();
  manual_seed(12);
  // Two groups, stride 2, padding 1: (9 + 2 - 3) / 2 + 1 = 5 outputs a side.
  Tensor x = randn({3, 4, 9, 9}, dev, bf16), w = randn({6, 2, 3, 3}, dev, bf16), g = randn({3, 6, 5, 5}, dev, bf16);
  Tensor dx = conv2d_input_grad(g, w, Shape{3, 4, 9, 9}, 2, 1, 1, 2);
  Tensor dw = conv2d_weight_grad(x, Shape{6, 2, 3, 3}, g, 2, 1, 1, 2);
  ASSERT_EQ(dx.dtype(), bf16);
  ASSERT_EQ(dw.dtype(), bf16);
  // The same bf16 values in f32: the bf16 results differ by one rounding and the order of f32 sums.
  Tensor dx32 = conv2d_input_grad(g.to(f32), w.to(f32), Shape{3, 4, 9, 9}, 2, 1, 1, 2);
  Tensor dw32 = conv2d_weight_grad(x.to(f32), Shape{6, 2, 3, 3}, g.to(f32), 2, 1, 1, 2);
  for (auto [got_t, want_t] : {std::pair{dx, dx32}, std::pair{dw, dw32}}) {
    const std::vector<float> got = got_t.to_vector<float>(), want = want_t.to_vector<float>();
    ASSERT_EQ(got.size(), want.size());
    for (std::size_t k = 0; k < got.size(); ++k) ASSERT_NEAR(got[k], want[k], std::abs(want[k]) / 128 + 1e-3) << k;
  }
}

INSTANTIATE_TEST_SUITE_P(ProductsOnBothDevices, Bf16ProductsOnDevice, ::testing::Values(cpu, device()),
                         [](const auto& info) { return info.param.is_lazy() ? std::string("lazy") : std::string("cpu"); });

}  // namespace
}  // namespace lt
