// Reference cases of matmul, conv2d and the pools: naive loops in f64.
#include <gtest/gtest.h>

#include "op_harness.hpp"

namespace lt::test {
namespace {

/// torch.matmul by definition: vectors become a row (left) or a column (right), batch dims
/// broadcast, then each product is a triple loop.
Ref matmul_ref(const Ref& a, const Ref& b, DType out) {
  auto as_mat = [](const Ref& r, bool left) {
    std::vector<std::int64_t> s = r.shape;
    if (s.size() == 1) s = left ? std::vector<std::int64_t>{1, s[0]} : std::vector<std::int64_t>{s[0], 1};
    return s;
  };
  auto sa = as_mat(a, true), sb = as_mat(b, false);
  std::int64_t n = sa[sa.size() - 2], k = sa.back(), m = sb.back();
  std::vector<std::int64_t> ba(sa.begin(), sa.end() - 2), bb(sb.begin(), sb.end() - 2);
  auto batch = broadcast_shape({ba, bb});
  auto ia = broadcast_index(ba, batch), ib = broadcast_index(bb, batch);
  Ref r{batch, out, {}};
  if (a.shape.size() > 1) r.shape.push_back(n);
  if (b.shape.size() > 1) r.shape.push_back(m);
  for (std::size_t q = 0; q < ia.size(); ++q)
    for (std::int64_t i = 0; i < n; ++i)
      for (std::int64_t j = 0; j < m; ++j) {
        double acc = 0;
        for (std::int64_t p = 0; p < k; ++p)
          acc += a.v[static_cast<std::size_t>((ia[q] * n + i) * k + p)] * b.v[static_cast<std::size_t>((ib[q] * k + p) * m + j)];
        r.v.push_back(round_to(out, acc));
      }
  return r;
}

Ref conv_ref(const Ref& x, const Ref& w, std::int64_t s, std::int64_t p, std::int64_t d, std::int64_t g) {
  std::int64_t N = x.shape[0], C = x.shape[1], H = x.shape[2], W = x.shape[3], O = w.shape[0], KH = w.shape[2], KW = w.shape[3];
  std::int64_t OH = (H + 2 * p - d * (KH - 1) - 1) / s + 1, OW = (W + 2 * p - d * (KW - 1) - 1) / s + 1;
  Ref r{{N, O, OH, OW}, x.dtype, {}};
  for (std::int64_t n = 0; n < N; ++n)
    for (std::int64_t o = 0; o < O; ++o)
      for (std::int64_t i = 0; i < OH; ++i)
        for (std::int64_t j = 0; j < OW; ++j) {
          double acc = 0;
          std::int64_t cg = C / g, grp = o / (O / g);
          for (std::int64_t c = 0; c < cg; ++c)
            for (std::int64_t a = 0; a < KH; ++a)
              for (std::int64_t b = 0; b < KW; ++b) {
                std::int64_t y = i * s - p + a * d, z = j * s - p + b * d;
                if (y < 0 || y >= H || z < 0 || z >= W) continue;
                acc += x.v[static_cast<std::size_t>(((n * C + grp * cg + c) * H + y) * W + z)] *
                       w.v[static_cast<std::size_t>(((o * cg + c) * KH + a) * KW + b)];
              }
          r.v.push_back(round_to(x.dtype, acc));
        }
  return r;
}

/// conv2d's two gradients by definition: each product x[n, c, y, z] * w[o, c', a, b] of the
/// forward sum, with the output gradient gy[n, o, i, j] as its weight, sent to dx and dw.
struct ConvGrads {
  Ref dx, dw;
};
ConvGrads conv_grads_ref(const Ref& x, const Ref& w, const Ref& gy, std::int64_t s, std::int64_t p, std::int64_t d,
                         std::int64_t g) {
  std::int64_t N = x.shape[0], C = x.shape[1], H = x.shape[2], W = x.shape[3], O = w.shape[0], KH = w.shape[2], KW = w.shape[3];
  std::int64_t OH = gy.shape[2], OW = gy.shape[3], cg = C / g;
  std::vector<double> dx(x.v.size(), 0.0), dw(w.v.size(), 0.0);
  for (std::int64_t n = 0; n < N; ++n)
    for (std::int64_t o = 0; o < O; ++o)
      for (std::int64_t i = 0; i < OH; ++i)
        for (std::int64_t j = 0; j < OW; ++j) {
          const double go = gy.v[static_cast<std::size_t>(((n * O + o) * OH + i) * OW + j)];
          const std::int64_t grp = o / (O / g);
          for (std::int64_t c = 0; c < cg; ++c)
            for (std::int64_t a = 0; a < KH; ++a)
              for (std::int64_t b = 0; b < KW; ++b) {
                std::int64_t y = i * s - p + a * d, z = j * s - p + b * d;
                if (y < 0 || y >= H || z < 0 || z >= W) continue;
                const auto xi = static_cast<std::size_t>(((n * C + grp * cg + c) * H + y) * W + z);
                const auto wi = static_cast<std::size_t>(((o * cg + c) * KH + a) * KW + b);
                dx[xi] += go * w.v[wi];
                dw[wi] += go * x.v[xi];
              }
        }
  ConvGrads r{{x.shape, x.dtype, {}}, {w.shape, w.dtype, {}}};
  for (double v : dx) r.dx.v.push_back(round_to(x.dtype, v));
  for (double v : dw) r.dw.v.push_back(round_to(w.dtype, v));
  return r;
}

/// Pools by definition; `reduce` gets the in-bounds values and the padded window size.
Ref pool_ref(const Ref& x, std::int64_t k, std::int64_t s, std::int64_t p, bool ceil_mode,
             const std::function<double(const std::vector<double>&, std::int64_t)>& reduce) {
  std::int64_t N = x.shape[0], C = x.shape[1], H = x.shape[2], W = x.shape[3];
  auto out = [&](std::int64_t in) {
    std::int64_t span = in + 2 * p - k;
    std::int64_t o = (ceil_mode ? (span + s - 1) / s : span / s) + 1;
    if (ceil_mode && (o - 1) * s >= in + p) --o;
    return o;
  };
  std::int64_t OH = out(H), OW = out(W);
  Ref r{{N, C, OH, OW}, x.dtype, {}};
  for (std::int64_t nc = 0; nc < N * C; ++nc)
    for (std::int64_t i = 0; i < OH; ++i)
      for (std::int64_t j = 0; j < OW; ++j) {
        std::vector<double> vals;
        std::int64_t y0 = i * s - p, z0 = j * s - p;
        std::int64_t padded = (std::min(y0 + k, H + p) - y0) * (std::min(z0 + k, W + p) - z0);
        for (std::int64_t y = y0; y < y0 + k; ++y)
          for (std::int64_t z = z0; z < z0 + k; ++z)
            if (y >= 0 && y < H && z >= 0 && z < W) vals.push_back(x.v[static_cast<std::size_t>((nc * H + y) * W + z)]);
        r.v.push_back(round_to(x.dtype, reduce(vals, padded)));
      }
  return r;
}

/// max_pool2d's gradient by a plain loop: each output's gradient added, window by window, at
/// the first largest element of its window (the first NaN where there is one).
Ref max_pool_backward_ref(const Ref& g, const Ref& x, std::int64_t k, std::int64_t s, std::int64_t p) {
  std::int64_t H = x.shape[2], W = x.shape[3], OH = g.shape[2], OW = g.shape[3];
  Ref r{x.shape, x.dtype, std::vector<double>(x.v.size(), 0.0)};
  for (std::int64_t nc = 0; nc < x.shape[0] * x.shape[1]; ++nc)
    for (std::int64_t i = 0; i < OH; ++i)
      for (std::int64_t j = 0; j < OW; ++j) {
        std::int64_t best = -1;
        for (std::int64_t y = i * s - p; y < i * s - p + k; ++y)
          for (std::int64_t z = j * s - p; z < j * s - p + k; ++z) {
            if (y < 0 || y >= H || z < 0 || z >= W) continue;
            std::int64_t at = (nc * H + y) * W + z;
            double v = x.v[static_cast<std::size_t>(at)];
            if (best < 0 || (!std::isnan(x.v[static_cast<std::size_t>(best)]) && (std::isnan(v) || v > x.v[static_cast<std::size_t>(best)])))
              best = at;
          }
        // Added up in the dtype the op computes in, and rounded to x's once at the end.
        double& dst = r.v[static_cast<std::size_t>(best)];
        dst = round_intermediate(x.dtype, dst + g.v[static_cast<std::size_t>((nc * OH + i) * OW + j)]);
      }
  for (double& v : r.v) v = round_to(x.dtype, v);
  return r;
}

double max_of(const std::vector<double>& v, std::int64_t) {
  double m = -INFINITY;
  for (double x : v) if (std::isnan(x) || x > m) { m = x; if (std::isnan(x)) break; }
  return m;
}
double mean_padded(const std::vector<double>& v, std::int64_t padded) {
  double acc = 0;
  for (double x : v) acc += x;
  return acc / static_cast<double>(padded);
}

}  // namespace

LT_OP_TEST(matmul) {
  auto mm = [](const std::vector<Tensor>& in) { return matmul(in[0], in[1]); };
  CaseList cases;
  std::vector<std::pair<std::vector<std::int64_t>, std::vector<std::int64_t>>> shapes = {
      {{4}, {4}}, {{3, 4}, {4, 5}}, {{4}, {4, 5}}, {{3, 4}, {4}}, {{2, 3, 4}, {4, 5}}, {{2, 1, 3, 4}, {5, 4, 2}},
      {{0, 4}, {4, 3}}, {{3, 0}, {0, 2}}, {{70, 33}, {33, 40}}};
  std::uint32_t seed = 100;
  for (auto& [sa, sb] : shapes) {
    Ref a = random_ref(sa, DType::f32, seed++), b = random_ref(sb, DType::f32, seed++);
    cases.push_back({"f32 " + Shape(std::span<const std::int64_t>(sa)).str() + " x " + Shape(std::span<const std::int64_t>(sb)).str(),
                     {a, b}, mm, matmul_ref(a, b, DType::f32), 1e-4, 1e-4});
  }
  Ref a64 = random_ref({3, 5}, DType::f64, 7), b64 = random_ref({5, 2}, DType::f64, 8);
  cases.push_back({"f64", {a64, b64}, mm, matmul_ref(a64, b64, DType::f64), 1e-12, 1e-12});
  Ref ai = random_ref({2, 3}, DType::i64, 9, -5, 5), bi = random_ref({3, 4}, DType::i32, 10, -5, 5);
  cases.push_back({"i64 x i32 -> i64", {ai, bi}, mm, matmul_ref(ai, bi, DType::i64)});
  Ref af = random_ref({2, 3}, DType::f32, 11), bd = random_ref({3, 2}, DType::f64, 12);
  cases.push_back({"f32 x f64 -> f64", {af, bd}, mm, matmul_ref(af, bd, DType::f64), 1e-6, 1e-6});
  Ref x = random_ref({3, 4}, DType::f32, 13), y = random_ref({3, 5}, DType::f32, 14);
  Ref xt{{4, 3}, DType::f32, {}};
  for (int i = 0; i < 4; ++i) for (int j = 0; j < 3; ++j) xt.v.push_back(x.v[static_cast<std::size_t>(j * 4 + i)]);
  cases.push_back({"transposed left operand", {x, y}, [](const std::vector<Tensor>& in) { return matmul(in[0].t(), in[1]); },
                   matmul_ref(xt, y, DType::f32), 1e-4, 1e-4});
  return cases;
}

LT_OP_TEST(conv2d) {
  CaseList cases;
  struct Conf { std::vector<std::int64_t> x, w; std::int64_t s, p, d, g; };
  std::vector<Conf> confs = {{{1, 1, 5, 5}, {1, 1, 3, 3}, 1, 0, 1, 1}, {{2, 3, 7, 6}, {4, 3, 3, 2}, 2, 1, 1, 1},
                             {{1, 2, 9, 9}, {2, 2, 3, 3}, 1, 2, 2, 1}, {{2, 4, 6, 6}, {6, 2, 3, 3}, 1, 1, 1, 2},
                             {{1, 3, 5, 5}, {3, 1, 2, 2}, 1, 0, 1, 3},
                             // Unpadded, output rows of 8, 12 and 24 values (one, two and three
                             // 32-byte blocks, the last overlapping) and a dilated kernel.
                             {{2, 2, 12, 12}, {3, 2, 5, 5}, 1, 0, 1, 1}, {{1, 2, 12, 14}, {3, 2, 3, 3}, 1, 0, 1, 1},
                             {{2, 1, 28, 28}, {4, 1, 5, 5}, 1, 0, 1, 1}, {{1, 1, 16, 20}, {2, 1, 3, 3}, 1, 0, 2, 1}};
  std::uint32_t seed = 200;
  for (auto& c : confs) {
    Ref x = random_ref(c.x, DType::f32, seed++), w = random_ref(c.w, DType::f32, seed++);
    auto run = [c](const std::vector<Tensor>& in) { return conv2d(in[0], in[1], std::nullopt, c.s, c.p, c.d, c.g); };
    cases.push_back({"s" + std::to_string(c.s) + " p" + std::to_string(c.p) + " d" + std::to_string(c.d) + " g" + std::to_string(c.g),
                     {x, w}, run, conv_ref(x, w, c.s, c.p, c.d, c.g), 1e-4, 1e-4});
  }
  Ref x = random_ref({2, 5, 5}, DType::f64, 300), w = random_ref({3, 2, 2, 2}, DType::f64, 301);
  Ref x4 = x;
  x4.shape = {1, 2, 5, 5};
  Ref expected = conv_ref(x4, w, 1, 0, 1, 1);
  expected.shape = {3, 4, 4};
  cases.push_back({"unbatched f64", {x, w}, [](const std::vector<Tensor>& in) { return conv2d(in[0], in[1]); }, expected, 1e-12, 1e-12});
  return cases;
}

namespace {
struct ConvConf {
  std::vector<std::int64_t> x, w;
  std::int64_t s, p, d, g;
  std::string name() const {
    return "s" + std::to_string(s) + " p" + std::to_string(p) + " d" + std::to_string(d) + " g" + std::to_string(g);
  }
};
// Strides that leave input rows unread, padding beyond the kernel's reach, dilation, groups, and
// unpadded rows of 8 to 24 values.
const std::vector<ConvConf> conv_grad_confs = {{{2, 3, 7, 6}, {4, 3, 3, 2}, 2, 1, 1, 1}, {{1, 2, 9, 9}, {2, 2, 3, 3}, 1, 2, 2, 1},
                                               {{2, 4, 6, 6}, {6, 2, 3, 3}, 1, 1, 1, 2}, {{1, 1, 6, 7}, {2, 1, 2, 2}, 3, 0, 1, 1},
                                               {{1, 1, 3, 3}, {1, 1, 1, 2}, 1, 2, 1, 1}, {{3, 2, 8, 8}, {3, 2, 5, 5}, 1, 0, 1, 1},
                                               {{2, 2, 12, 14}, {3, 2, 3, 3}, 1, 0, 1, 1}, {{2, 1, 28, 28}, {4, 1, 5, 5}, 1, 0, 1, 1},
                                               // Images whose columns outgrow one product: a run multiplies them a few at a time.
                                               {{12, 3, 20, 20}, {2, 3, 5, 5}, 1, 0, 1, 1}};
Ref conv_output_grad(const ConvConf& c, std::uint32_t seed) {
  auto out = [&](std::int64_t in, std::int64_t k) { return (in + 2 * c.p - c.d * (k - 1) - 1) / c.s + 1; };
  return random_ref({c.x[0], c.w[0], out(c.x[2], c.w[2]), out(c.x[3], c.w[3])}, DType::f32, seed);
}
}  // namespace

/// One case per configuration: case_of(conf, x, w, gy) picks the operands, call and reference.
template <class CaseOf>
CaseList conv_grad_cases(std::uint32_t seed, CaseOf case_of) {
  CaseList cases;
  for (const ConvConf& c : conv_grad_confs) {
    Ref x = random_ref(c.x, DType::f32, seed++), w = random_ref(c.w, DType::f32, seed++), gy = conv_output_grad(c, seed++);
    cases.push_back(case_of(c, x, w, gy));
  }
  return cases;
}

LT_OP_TEST(conv2d_input_grad) {
  return conv_grad_cases(600, [](const ConvConf& c, const Ref& x, const Ref& w, const Ref& gy) -> OpCase {
    auto run = [c](const std::vector<Tensor>& in) { return conv2d_input_grad(in[0], in[1], Shape(c.x), c.s, c.p, c.d, c.g); };
    return {c.name(), {gy, w}, run, conv_grads_ref(x, w, gy, c.s, c.p, c.d, c.g).dx, 1e-4, 1e-4};
  });
}

LT_OP_TEST(conv2d_weight_grad) {
  CaseList cases = conv_grad_cases(700, [](const ConvConf& c, const Ref& x, const Ref& w, const Ref& gy) -> OpCase {
    auto run = [c](const std::vector<Tensor>& in) { return conv2d_weight_grad(in[0], Shape(c.w), in[1], c.s, c.p, c.d, c.g); };
    return {c.name(), {x, gy}, run, conv_grads_ref(x, w, gy, c.s, c.p, c.d, c.g).dw, 1e-4, 1e-4};
  });
  // More images than one run of the kernel's fixed split, in f64.
  ConvConf many{{37, 2, 5, 5}, {3, 2, 3, 3}, 1, 1, 1, 1};
  Ref x = random_ref(many.x, DType::f64, 800), w = random_ref(many.w, DType::f64, 801);
  Ref gy = random_ref({37, 3, 5, 5}, DType::f64, 802);
  auto run = [many](const std::vector<Tensor>& in) { return conv2d_weight_grad(in[0], Shape(many.w), in[1], 1, 1); };
  cases.push_back({"37 images f64", {x, gy}, run, conv_grads_ref(x, w, gy, 1, 1, 1, 1).dw, 1e-12, 1e-12});
  return cases;
}

LT_OP_TEST(max_pool2d) {
  Ref x = random_ref({2, 3, 7, 6}, DType::f32, 400);
  Ref xn = x;
  xn.v[5] = NAN;
  xn.v[40] = INFINITY;
  return {{"k2", {x}, [](const std::vector<Tensor>& in) { return max_pool2d(in[0], 2); }, pool_ref(x, 2, 2, 0, false, max_of)},
          {"k3 s2 p1 ceil", {x}, [](const std::vector<Tensor>& in) { return max_pool2d(in[0], 3, Pair2(2), 1, 1, true); },
           pool_ref(x, 3, 2, 1, true, max_of)},
          {"NaN and inf", {xn}, [](const std::vector<Tensor>& in) { return max_pool2d(in[0], 2, Pair2(1)); },
           pool_ref(xn, 2, 1, 0, false, max_of)},
          {"k2 ceil, NaN and inf", {xn}, [](const std::vector<Tensor>& in) { return max_pool2d(in[0], 2, std::nullopt, 0, 1, true); },
           pool_ref(xn, 2, 2, 0, true, max_of)}};
}

LT_OP_TEST(max_pool2d_backward) {
  Ref x = random_ref({2, 3, 7, 6}, DType::f32, 450), g2 = random_ref({2, 3, 3, 3}, DType::f32, 451);
  Ref g3 = random_ref({2, 3, 4, 4}, DType::f32, 452), g1 = random_ref({2, 3, 6, 5}, DType::f32, 453);
  Ref xn = x;
  xn.v[5] = NAN;
  xn.v[40] = INFINITY;
  Ref g4 = random_ref({2, 3, 4, 3}, DType::f32, 454), xt = x;
  for (std::size_t k = 0; k < xt.v.size(); ++k) xt.v[k] = static_cast<double>(k % 5 < 2);  // equal maxima in most windows
  Ref xe = random_ref({2, 3, 6, 8}, DType::f32, 455), ge = random_ref({2, 3, 3, 4}, DType::f32, 456), xs = xe;
  for (std::size_t k = 0; k < xs.v.size(); ++k) xs.v[k] = static_cast<double>(k % 3 == 0);  // ties
  for (std::size_t k : {1, 17, 24, 25, 50, 58, 59, 100}) xs.v[k] = NAN;  // some windows with two NaNs
  for (std::size_t k : {3, 40, 66}) xs.v[k] = INFINITY;
  xs.v[70] = -INFINITY;
  return {{"k2", {g2, x}, [](const std::vector<Tensor>& in) { return max_pool2d_backward(in[0], in[1], 2); },
           max_pool_backward_ref(g2, x, 2, 2, 0)},
          {"k3 s2 p1 ceil, overlapping", {g3, x},
           [](const std::vector<Tensor>& in) { return max_pool2d_backward(in[0], in[1], 3, Pair2(2), 1, 1, true); },
           max_pool_backward_ref(g3, x, 3, 2, 1), 1e-6, 1e-6},
          {"NaN and inf, stride 1", {g1, xn},
           [](const std::vector<Tensor>& in) { return max_pool2d_backward(in[0], in[1], 2, Pair2(1)); },
           max_pool_backward_ref(g1, xn, 2, 1, 0), 1e-6, 1e-6},
          {"k2 ceil, NaN and inf", {g4, xn},
           [](const std::vector<Tensor>& in) { return max_pool2d_backward(in[0], in[1], 2, std::nullopt, 0, 1, true); },
           max_pool_backward_ref(g4, xn, 2, 2, 0)},
          {"k2, ties go to the first", {g2, xt},
           [](const std::vector<Tensor>& in) { return max_pool2d_backward(in[0], in[1], 2); },
           max_pool_backward_ref(g2, xt, 2, 2, 0)},
          // Planes that 2x2 windows tile exactly: ties, NaN and inf.
          {"k2 tiling the plane", {ge, xe}, [](const std::vector<Tensor>& in) { return max_pool2d_backward(in[0], in[1], 2); },
           max_pool_backward_ref(ge, xe, 2, 2, 0)},
          {"k2 tiling the plane, ties, NaN and inf", {ge, xs},
           [](const std::vector<Tensor>& in) { return max_pool2d_backward(in[0], in[1], 2); },
           max_pool_backward_ref(ge, xs, 2, 2, 0)}};
}

LT_OP_TEST(avg_pool2d) {
  Ref x = random_ref({2, 2, 7, 6}, DType::f32, 500);
  Ref x64 = random_ref({1, 2, 5, 5}, DType::f64, 501);
  return {{"k2", {x}, [](const std::vector<Tensor>& in) { return avg_pool2d(in[0], 2); }, pool_ref(x, 2, 2, 0, false, mean_padded)},
          {"k3 s2 p1 ceil, padding counted", {x}, [](const std::vector<Tensor>& in) { return avg_pool2d(in[0], 3, Pair2(2), 1, true); },
           pool_ref(x, 3, 2, 1, true, mean_padded)},
          {"padding not counted", {x64},
           [](const std::vector<Tensor>& in) { return avg_pool2d(in[0], 3, Pair2(1), 1, false, false); },
           pool_ref(x64, 3, 1, 1, false, [](const std::vector<double>& v, std::int64_t) { return mean_padded(v, static_cast<std::int64_t>(v.size())); }),
           1e-12, 1e-12}};
}

LT_OP_TEST(adaptive_avg_pool2d) {
  CaseList cases;
  for (auto [h, w, oh, ow] : std::vector<std::array<std::int64_t, 4>>{{6, 6, 3, 3}, {7, 5, 3, 2}, {5, 5, 1, 1}, {3, 4, 5, 6}}) {
    Ref x = random_ref({2, 2, h, w}, DType::f32, static_cast<std::uint32_t>(600 + h * 10 + w));
    Ref r{{2, 2, oh, ow}, DType::f32, {}};
    for (std::int64_t nc = 0; nc < 4; ++nc)
      for (std::int64_t i = 0; i < oh; ++i)
        for (std::int64_t j = 0; j < ow; ++j) {
          std::int64_t i0 = i * h / oh, i1 = ((i + 1) * h + oh - 1) / oh, j0 = j * w / ow, j1 = ((j + 1) * w + ow - 1) / ow;
          double acc = 0;
          for (std::int64_t y = i0; y < i1; ++y)
            for (std::int64_t z = j0; z < j1; ++z) acc += x.v[static_cast<std::size_t>((nc * h + y) * w + z)];
          r.v.push_back(round_to(DType::f32, acc / static_cast<double>((i1 - i0) * (j1 - j0))));
        }
    cases.push_back({std::to_string(h) + "x" + std::to_string(w) + " to " + std::to_string(oh) + "x" + std::to_string(ow), {x},
                     // Copies, not the bindings: clang before 16 cannot capture a binding.
                     [oh = oh, ow = ow](const std::vector<Tensor>& in) { return adaptive_avg_pool2d(in[0], Pair2(oh, ow)); }, r});
  }
  return cases;
}

namespace {

TEST(ContractionErrors, NameTheOpAndShapesAndRecordNothing) {
  for (Device dev : {cpu, device()}) {
    Tensor a = ones({2, 3}, dev), b = ones({4, 5}, dev);
    auto message = [](auto&& f) {
      try {
        f();
      } catch (const Error& e) {
        return std::string(e.what());
      }
      return std::string("no error");
    };
    std::string m = message([&] { matmul(a, b); });
    EXPECT_NE(m.find("matmul"), std::string::npos) << m;
    EXPECT_NE(m.find("[2, 3]"), std::string::npos) << m;
    EXPECT_NE(m.find("[4, 5]"), std::string::npos) << m;
    EXPECT_NE(message([&] { mm(a, ones({3}, dev)); }).find("mm"), std::string::npos);
    EXPECT_NE(message([&] { bmm(ones({2, 2, 3}, dev), ones({3, 3, 2}, dev)); }).find("bmm"), std::string::npos);
    EXPECT_NE(message([&] { conv2d(ones({1, 3, 5, 5}, dev), ones({2, 2, 3, 3}, dev)); }).find("conv2d"), std::string::npos);
    EXPECT_NE(message([&] { conv2d(ones({1, 1, 2, 2}, dev), ones({1, 1, 3, 3}, dev)); }).find("does not fit"), std::string::npos);
    EXPECT_NE(message([&] { max_pool2d(ones({1, 1, 4, 4}, dev), 0); }).find("max_pool2d"), std::string::npos);
    EXPECT_NE(message([&] { avg_pool2d(ones({4, 4}, dev), 2); }).find("avg_pool2d"), std::string::npos);
    EXPECT_NE(message([&] { adaptive_avg_pool2d(ones({1, 1, 4, 4}, dev), 0); }).find("adaptive_avg_pool2d"), std::string::npos);
    Tensor c = a.mm(ones({3, 2}, dev));  // the next op still works
    if (dev.is_lazy()) sync(dev);
    EXPECT_EQ(c.to_vector<float>(), std::vector<float>(4, 3.0f));
  }
}

}  // namespace
}  // namespace lt::test
