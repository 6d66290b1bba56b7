// Fused and op-by-op results bit for bit in a build for this CPU at -O3. Where the CPU has FMA,
// a compiler free to contract a * b + c (GCC's default -ffp-contract=fast) fuses the product
// into the add inside a fragment's kernel, compiled in this file, but cannot across ops run one
// by one, each of which rounds its result: the bits then differ. lazytensor's targets compile
// with -ffp-contract=off, so each multiply-add shape below gives the same bits as a fragment
// (eager and lazy), as ops one by one (eager, lazy with a barrier after each op, lazy fused into
// one group), and as a plain loop that rounds every intermediate through a volatile store.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <lazytensor/lazytensor.hpp>

namespace lt {
namespace {

constexpr std::int64_t rows = 67, cols = 45;  // 3,015 elements: whole packets and a tail

/// A tensor run op by op: each op becomes a Tensor at once; `barrier`: a sync() after each, so
/// that on a lazy device every op is a step of its own.
struct Step {
  Tensor t;
  bool barrier;
};
Step made(Tensor t, bool barrier) {
  if (barrier) sync();
  return {std::move(t), barrier};
}
Step operator*(const Step& x, const Step& y) { return made(x.t * y.t, x.barrier); }
Step operator+(const Step& x, const Step& y) { return made(x.t + y.t, x.barrier); }
Step operator-(const Step& x, const Step& y) { return made(x.t - y.t, x.barrier); }
Step operator*(const Step& x, float s) { return made(x.t * s, x.barrier); }
Step relu(const Step& x) { return made(relu(x.t), x.barrier); }

/// A value whose every op rounds to T: the result goes through a volatile store, which no
/// compiler fuses with the next op.
template <class T> struct Rounded {
  T v;
};
template <class T> Rounded<T> rounded(T v) {
  volatile T r = v;
  return {r};
}
template <class T> Rounded<T> operator*(Rounded<T> x, Rounded<T> y) { return rounded<T>(x.v * y.v); }
template <class T> Rounded<T> operator+(Rounded<T> x, Rounded<T> y) { return rounded<T>(x.v + y.v); }
template <class T> Rounded<T> operator-(Rounded<T> x, Rounded<T> y) { return rounded<T>(x.v - y.v); }
template <class T> Rounded<T> operator*(Rounded<T> x, float s) { return rounded<T>(x.v * static_cast<T>(s)); }
template <class T> Rounded<T> relu(Rounded<T> x) { return {x.v < T(0) ? T(0) : x.v}; }

// Multiply-add shapes, over a, b, d of [rows, cols] and c of [cols] (broadcast along rows).
const auto relu_affine = [](const auto& a, const auto& b, const auto& c, const auto&) { return relu(a * b + c) * 0.5f; };
const auto two_products = [](const auto& a, const auto& b, const auto& c, const auto& d) { return a * b - c * d; };
const auto horner = [](const auto& a, const auto& b, const auto& c, const auto& d) { return (a * b + c) * d + a; };
const auto lerp = [](const auto& a, const auto& b, const auto&, const auto& d) { return a + (b - a) * d; };
const auto scaled_sum = [](const auto& a, const auto& b, const auto& c, const auto&) { return a * 0.75f + b * 1.5f + c; };

template <class T> std::vector<T> normal_values(std::int64_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::normal_distribution<double> dist(0.0, 2.0);
  std::vector<T> v(static_cast<std::size_t>(n));
  for (T& x : v) x = static_cast<T>(dist(gen));
  return v;
}

template <class T> void expect_same_bits(const Tensor& got, const std::vector<T>& want, const std::string& what) {
  ASSERT_EQ(got.shape(), (Shape{rows, cols})) << what;
  const std::vector<T> g = got.to_vector<T>();
  ASSERT_EQ(g.size(), want.size()) << what;
  std::int64_t differ = 0, first = -1;
  for (std::size_t i = 0; i < g.size(); ++i)
    if (std::memcmp(&g[i], &want[i], sizeof(T)) != 0 && differ++ == 0) first = static_cast<std::int64_t>(i);
  EXPECT_EQ(differ, 0) << what << ": " << differ << " of " << g.size() << " elements differ, the first at " << first << ": "
                       << g[static_cast<std::size_t>(first < 0 ? 0 : first)] << " vs "
                       << want[static_cast<std::size_t>(first < 0 ? 0 : first)];
}

template <class T, class F> void check_shape(const F& f, const std::string& name) {
  const std::vector<T> va = normal_values<T>(rows * cols, 1), vb = normal_values<T>(rows * cols, 2),
                       vc = normal_values<T>(cols, 3), vd = normal_values<T>(rows * cols, 4);
  std::vector<T> want(va.size());
  for (std::size_t i = 0; i < want.size(); ++i)
    want[i] = f(Rounded<T>{va[i]}, Rounded<T>{vb[i]}, Rounded<T>{vc[i % static_cast<std::size_t>(cols)]}, Rounded<T>{vd[i]}).v;

  for (Device dev : {cpu, device()}) {
    const std::string where = name + (dev == cpu ? " on the eager cpu" : " on the lazy device");
    const Tensor a = from_vector(va, Shape{rows, cols}, dev), b = from_vector(vb, Shape{rows, cols}, dev),
                 c = from_vector(vc, Shape{cols}, dev), d = from_vector(vd, Shape{rows, cols}, dev);
    sync();
    // The fragment: one node, its kernel compiled in this file.
    const Tensor fragment = f(a, b, c, d);
    if (dev != cpu) EXPECT_EQ(debug::plan_stats({fragment}).kernels, 1) << where << ": one fused kernel";
    expect_same_bits(fragment, want, where + ", a fragment");
    // Op by op; on the lazy device first traced into one step (the scheduler fuses the ops into
    // one group), then with a barrier after each op.
    const Tensor traced = f(Step{a, false}, Step{b, false}, Step{c, false}, Step{d, false}).t;
    if (dev != cpu) {
      const PlanStats stats = debug::plan_stats({traced});
      EXPECT_EQ(stats.kernels, 1) << where << ": the ops traced one by one run as one group";
      EXPECT_EQ(stats.fused_groups, 1) << where;
    }
    expect_same_bits(traced, want, where + (dev == cpu ? ", op by op" : ", op by op in one fused group"));
    if (dev != cpu)
      expect_same_bits(f(Step{a, true}, Step{b, true}, Step{c, true}, Step{d, true}).t, want, where + ", a step per op");
  }
}

template <class T> class FusedBits : public ::testing::Test {};
using FloatTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(FusedBits, FloatTypes);

TYPED_TEST(FusedBits, ReluOfAnAffineMapHalved) { check_shape<TypeParam>(relu_affine, "relu(a * b + c) * 0.5"); }
TYPED_TEST(FusedBits, DifferenceOfTwoProducts) { check_shape<TypeParam>(two_products, "a * b - c * d"); }
TYPED_TEST(FusedBits, HornerSteps) { check_shape<TypeParam>(horner, "(a * b + c) * d + a"); }
TYPED_TEST(FusedBits, Lerp) { check_shape<TypeParam>(lerp, "a + (b - a) * d"); }
TYPED_TEST(FusedBits, SumOfScaledTerms) { check_shape<TypeParam>(scaled_sum, "a * 0.75 + b * 1.5 + c"); }

// gelu's tanh form holds multiply-adds of its own (x + 0.044715 x^3): one op run alone, its
// kernel compiled in the implementation, and the same functor inside a fragment compiled here.
TYPED_TEST(FusedBits, GeluTanhInsideAFragmentAndAlone) {
  using T = TypeParam;
  const std::vector<T> va = normal_values<T>(rows * cols, 5), vb = normal_values<T>(rows * cols, 6);
  for (Device dev : {cpu, device()}) {
    const Tensor a = from_vector(va, Shape{rows, cols}, dev), b = from_vector(vb, Shape{rows, cols}, dev);
    const Tensor fragment = gelu(a * b + a, "tanh") * b;
    Tensor ab = a * b;
    sync();
    Tensor s = ab + a;
    sync();
    Tensor g = gelu(s, "tanh");
    sync();
    const Tensor alone = g * b;
    expect_same_bits(fragment, alone.to_vector<T>(), dev == cpu ? "gelu on the eager cpu" : "gelu on the lazy device");
  }
}

// A product's epilogue (scale, bias, relu) on each tile of the product, against the same ops
// run one by one after the product and against the eager device.
TYPED_TEST(FusedBits, ProductEpilogue) {
  using T = TypeParam;
  const std::vector<T> vx = normal_values<T>(rows * 33, 7), vw = normal_values<T>(33 * cols, 8), vb = normal_values<T>(cols, 9);
  std::vector<T> want;
  for (Device dev : {cpu, device()}) {
    const Tensor x = from_vector(vx, Shape{rows, 33}, dev), w = from_vector(vw, Shape{33, cols}, dev),
                 b = from_vector(vb, Shape{cols}, dev);
    sync();
    Tensor mm = x.matmul(w);
    sync();
    Tensor scaled = mm * 0.5f;
    sync();
    Tensor biased = scaled + b;
    sync();
    const Tensor alone = relu(biased);
    if (want.empty()) want = alone.to_vector<T>();
    const std::string where = dev == cpu ? "on the eager cpu" : "on the lazy device";
    expect_same_bits(alone, want, "op by op " + where);
    const Tensor fused = relu(x.matmul(w) * 0.5f + b);
    if (dev != cpu) EXPECT_EQ(debug::plan_stats({fused}).gemm_epilogues, 1) << "the epilogue runs on the product's tiles";
    expect_same_bits(fused, want, "the product with its epilogue " + where);
  }
}

}  // namespace
}  // namespace lt
