// max_pool2d and its gradient over whole 2x2 windows, built for this machine's CPU: where it
// has AVX-512, rows of windows are taken 16 at a time under masks, and windows tiling planes
// 2 to 16 wide 16 at a time straight through the planes; these cases hold both paths to a
// plain loop bit for bit (rows of 1 to 33 windows; ties, NaN, infinities, signed zeros).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <lazytensor/lazytensor.hpp>

namespace lt {
namespace {

/// The gradient by a plain loop: each window's gradient added at its first NaN, else at its
/// first largest element, in row-major order within the window.
std::vector<float> reference(const std::vector<float>& x, const std::vector<float>& g, std::int64_t planes, std::int64_t H,
                             std::int64_t W, std::int64_t OH, std::int64_t OW) {
  std::vector<float> dx(x.size(), 0.0f);
  for (std::int64_t k = 0; k < planes; ++k)
    for (std::int64_t i = 0; i < OH; ++i)
      for (std::int64_t j = 0; j < OW; ++j) {
        std::int64_t at = -1;
        for (std::int64_t y = 2 * i; y < std::min(2 * i + 2, H); ++y)
          for (std::int64_t z = 2 * j; z < std::min(2 * j + 2, W); ++z) {
            const std::int64_t o = (k * H + y) * W + z;
            const auto u = static_cast<std::size_t>(o);
            if (at >= 0 && std::isnan(x[static_cast<std::size_t>(at)])) continue;
            if (at < 0 || std::isnan(x[u]) || x[u] > x[static_cast<std::size_t>(at)]) at = o;
          }
        dx[static_cast<std::size_t>(at)] += g[static_cast<std::size_t>((k * OH + i) * OW + j)];
      }
  return dx;
}

/// The window maxima by a plain loop: the first NaN, else the first largest element.
std::vector<float> reference_maxima(const std::vector<float>& x, std::int64_t planes, std::int64_t H, std::int64_t W,
                                    std::int64_t OH, std::int64_t OW) {
  std::vector<float> y;
  for (std::int64_t k = 0; k < planes; ++k)
    for (std::int64_t i = 0; i < OH; ++i)
      for (std::int64_t j = 0; j < OW; ++j) {
        float best = 0.0f;
        bool first = true;
        for (std::int64_t r = 2 * i; r < std::min(2 * i + 2, H); ++r)
          for (std::int64_t c = 2 * j; c < std::min(2 * j + 2, W); ++c) {
            const float v = x[static_cast<std::size_t>((k * H + r) * W + c)];
            if (!first && std::isnan(best)) continue;
            if (first || std::isnan(v) || v > best) best = v;
            first = false;
          }
        y.push_back(best);
      }
  return y;
}

/// Few distinct values, so that windows tie; now and then NaN, infinities and signed zeros.
std::vector<float> tied_values(std::size_t n, std::mt19937& gen) {
  std::uniform_int_distribution<int> small(0, 3);
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> x(n);
  for (float& v : x) {
    const int kind = std::uniform_int_distribution<int>(0, 39)(gen);
    v = kind == 0 ? nan : kind == 1 ? inf : kind == 2 ? -inf : kind == 3 ? -0.0f : static_cast<float>(small(gen));
  }
  return x;
}

TEST(MaxPoolPackets, WholeWindowMaximaMatchAPlainLoopBitForBit) {
  std::mt19937 gen(7);
  for (std::int64_t H : {2, 5, 8, 24})
    for (std::int64_t W : {2, 3, 4, 8, 9, 16, 24, 33, 35, 64, 66})
      for (bool ceil : {false, true}) {
        const std::int64_t N = 2, C = 3, OH = ceil ? (H + 1) / 2 : H / 2, OW = ceil ? (W + 1) / 2 : W / 2;
        const std::vector<float> x = tied_values(static_cast<std::size_t>(N * C * H * W), gen);
        Tensor y = max_pool2d(from_vector(x, Shape{N, C, H, W}, device()), 2, std::nullopt, 0, 1, ceil);
        const std::vector<float> got = y.to_vector<float>(), want = reference_maxima(x, N * C, H, W, OH, OW);
        ASSERT_EQ(got.size(), want.size());
        std::int64_t wrong = 0;
        for (std::size_t k = 0; k < got.size(); ++k) wrong += std::memcmp(&got[k], &want[k], sizeof(float)) != 0;
        EXPECT_EQ(wrong, 0) << "H " << H << ", W " << W << (ceil ? ", ceil mode" : "");
      }
}

TEST(MaxPoolPackets, WholeWindowGradientsMatchAPlainLoopBitForBit) {
  std::mt19937 gen(11);
  std::uniform_int_distribution<int> small(0, 3);
  std::normal_distribution<float> normal;
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  for (std::int64_t H : {2, 5, 8, 24})
    for (std::int64_t W : {2, 3, 4, 8, 9, 16, 24, 33, 35, 64, 66})
      for (bool ceil : {false, true}) {
        const std::int64_t N = 2, C = 3, OH = ceil ? (H + 1) / 2 : H / 2, OW = ceil ? (W + 1) / 2 : W / 2;
        std::vector<float> x(static_cast<std::size_t>(N * C * H * W)), g(static_cast<std::size_t>(N * C * OH * OW));
        for (float& v : x) {
          // Few distinct values, so that windows tie; now and then NaN and infinities.
          const int kind = std::uniform_int_distribution<int>(0, 39)(gen);
          v = kind == 0 ? nan : kind == 1 ? inf : kind == 2 ? -inf : static_cast<float>(small(gen));
        }
        for (std::size_t k = 0; k < g.size(); ++k) g[k] = k % 17 == 0 ? -0.0f : normal(gen);
        Tensor tx = from_vector(x, Shape{N, C, H, W}, device()), tg = from_vector(g, Shape{N, C, OH, OW}, device());
        Tensor dx = max_pool2d_backward(tg, tx, 2, std::nullopt, 0, 1, ceil);
        const std::vector<float> got = dx.to_vector<float>(), want = reference(x, g, N * C, H, W, OH, OW);
        std::int64_t wrong = 0;
        for (std::size_t k = 0; k < got.size(); ++k) wrong += std::memcmp(&got[k], &want[k], sizeof(float)) != 0;
        EXPECT_EQ(wrong, 0) << "H " << H << ", W " << W << (ceil ? ", ceil mode" : "");
      }
}

}  // namespace
}  // namespace lt
