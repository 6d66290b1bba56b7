// Gradient cases of every op with tensor inputs: differentiable ones are checked against
// finite differences; those marked not differentiable must give results that do not require
// grad. Shapes cover broadcasting, rank 0, keepdim, strides and the attributes each op takes.
#include <limits>

#include "gradcheck.hpp"

namespace lt::test {
namespace {

using Call1 = std::function<Tensor(const Tensor&)>;
using Call2 = std::function<Tensor(const Tensor&, const Tensor&)>;

GradCase one(std::string label, GradInput x, Call1 f) {
  return {std::move(label), {std::move(x)}, [f](const std::vector<Tensor>& in) { return f(in[0]); }};
}
GradCase two(std::string label, GradInput a, GradInput b, Call2 f) {
  return {std::move(label), {std::move(a), std::move(b)}, [f](const std::vector<Tensor>& in) { return f(in[0], in[1]); }};
}

/// A unary op over [3, 4] and rank 0, inputs in [lo, hi).
GradCaseList unary(const Call1& f, double lo = -2, double hi = 2) {
  return {one("[3, 4]", var({3, 4}, 1, lo, hi), f), one("rank 0", var({}, 2, lo, hi), f)};
}

/// A binary op: equal shapes, broadcasting both ways, a zero-dim tensor and a C++ scalar.
GradCaseList binary(const Call2& f, double lo_a = -2, double hi_a = 2, double lo_b = -2, double hi_b = 2,
                    double scalar = 1.5) {
  return {two("[2, 3] and [2, 3]", var({2, 3}, 1, lo_a, hi_a), var({2, 3}, 2, lo_b, hi_b), f),
          two("[2, 3] and [3] broadcast", var({2, 3}, 3, lo_a, hi_a), var({3}, 4, lo_b, hi_b), f),
          two("[2, 1] and [1, 3] broadcast", var({2, 1}, 5, lo_a, hi_a), var({1, 3}, 6, lo_b, hi_b), f),
          two("rank 0 and [2, 2]", var({}, 7, lo_a, hi_a), var({2, 2}, 8, lo_b, hi_b), f),
          one("tensor and C++ scalar", var({4}, 9, lo_a, hi_a),
              [f, scalar](const Tensor& a) { return f(a, scalar_tensor(scalar, a.device())); })};
}

/// The reduction over every dim, one dim, and two dims kept.
GradCaseList reduction(const std::function<Tensor(const Tensor&, Dims, bool)>& f, double lo = -2, double hi = 2) {
  return {one("every dim", var({2, 3}, 1, lo, hi), [f](const Tensor& x) { return f(x, Dims{}, false); }),
          one("dim 1", var({2, 3, 2}, 2, lo, hi), [f](const Tensor& x) { return f(x, Dims{1}, false); }),
          one("dims 0 and 2 kept", var({2, 3, 2}, 3, lo, hi), [f](const Tensor& x) { return f(x, Dims{0, -1}, true); }),
          one("rank 0", var({}, 4, lo, hi), [f](const Tensor& x) { return f(x, Dims{}, false); })};
}

Ref index_ref(std::vector<std::int64_t> shape, std::vector<double> v) { return values_ref(std::move(shape), DType::i64, std::move(v)); }

}  // namespace

// ---- unary ----
LT_GRAD_TEST(neg) { return unary([](const Tensor& x) { return -x; }); }
LT_GRAD_TEST(abs) { return unary([](const Tensor& x) { return abs(x); }); }
LT_GRAD_TEST(exp) { return unary([](const Tensor& x) { return exp(x); }); }
LT_GRAD_TEST(log) { return unary([](const Tensor& x) { return log(x); }, 0.3, 3); }
LT_GRAD_TEST(log2) { return unary([](const Tensor& x) { return log2(x); }, 0.2, 3); }
LT_GRAD_TEST(log1p) { return unary([](const Tensor& x) { return log1p(x); }, -0.7, 2); }
LT_GRAD_TEST(expm1) { return unary([](const Tensor& x) { return expm1(x); }); }
LT_GRAD_TEST(sqrt) { return unary([](const Tensor& x) { return sqrt(x); }, 0.3, 3); }
LT_GRAD_TEST(rsqrt) { return unary([](const Tensor& x) { return rsqrt(x); }, 0.3, 3); }
LT_GRAD_TEST(sin) { return unary([](const Tensor& x) { return sin(x); }); }
LT_GRAD_TEST(cos) { return unary([](const Tensor& x) { return cos(x); }); }
LT_GRAD_TEST(tanh) { return unary([](const Tensor& x) { return tanh(x); }); }
LT_GRAD_TEST(erf) { return unary([](const Tensor& x) { return erf(x); }); }
LT_GRAD_TEST(sigmoid) { return unary([](const Tensor& x) { return sigmoid(x); }); }
LT_GRAD_TEST(relu) { return unary([](const Tensor& x) { return relu(x); }); }
LT_GRAD_TEST(gelu) {
  GradCaseList c = unary([](const Tensor& x) { return gelu(x); });
  c.push_back(one("tanh form", var({3, 4}, 3), [](const Tensor& x) { return gelu(x, "tanh"); }));
  return c;
}
LT_GRAD_TEST(silu) { return unary([](const Tensor& x) { return silu(x); }); }
LT_GRAD_TEST(softplus) {
  GradCaseList c = unary([](const Tensor& x) { return softplus(x); });
  c.push_back(one("beta 2, threshold 1: partly linear", var({3, 4}, 3), [](const Tensor& x) { return softplus(x, 2.0, 1.0); }));
  return c;
}
LT_GRAD_TEST(sign) { return unary([](const Tensor& x) { return sign(x); }); }
LT_GRAD_TEST(floor) { return unary([](const Tensor& x) { return floor(x); }); }
LT_GRAD_TEST(ceil) { return unary([](const Tensor& x) { return ceil(x); }); }
LT_GRAD_TEST(round) { return unary([](const Tensor& x) { return round(x); }); }
LT_GRAD_TEST(reciprocal) { return unary([](const Tensor& x) { return reciprocal(x); }, 0.3, 3); }
LT_GRAD_TEST(clamp) {
  return {one("min and max", var({3, 4}, 1), [](const Tensor& x) { return clamp(x, -0.5, 0.7); }),
          one("min only, integer bound", var({3, 4}, 2), [](const Tensor& x) { return clamp(x, 0); }),
          one("max only", var({3, 4}, 3), [](const Tensor& x) { return clamp(x, std::nullopt, 0.3); })};
}
LT_GRAD_TEST(check_finite) { return unary([](const Tensor& x) { return check_finite(x); }); }
LT_GRAD_TEST(logical_not) { return unary([](const Tensor& x) { return logical_not(x); }); }
LT_GRAD_TEST(isnan) { return unary([](const Tensor& x) { return isnan(x); }); }
LT_GRAD_TEST(isinf) { return unary([](const Tensor& x) { return isinf(x); }); }
LT_GRAD_TEST(cast) {
  // Through f32 and back: differences need a step large enough for f32's rounding.
  GradCase c = one("f64 to f32", var({3, 4}, 1), [](const Tensor& x) { return x.to(DType::f32); });
  c.eps = 1e-3, c.rtol = 1e-4, c.atol = 1e-4;
  return {c};
}

// ---- binary ----
LT_GRAD_TEST(add) { return binary([](const Tensor& a, const Tensor& b) { return a + b; }); }
LT_GRAD_TEST(sub) { return binary([](const Tensor& a, const Tensor& b) { return a - b; }); }
LT_GRAD_TEST(mul) { return binary([](const Tensor& a, const Tensor& b) { return a * b; }); }
LT_GRAD_TEST(div) { return binary([](const Tensor& a, const Tensor& b) { return a / b; }, -2, 2, 0.5, 2); }
LT_GRAD_TEST(pow) {
  GradCaseList c = binary([](const Tensor& a, const Tensor& b) { return pow(a, b); }, 0.3, 2, -1.5, 1.5, 2.0);
  c.push_back(one("integer exponent of a negative base", var({5}, 11), [](const Tensor& a) { return pow(a, 3); }));
  return c;
}
LT_GRAD_TEST(maximum) {
  GradCaseList c = binary([](const Tensor& a, const Tensor& b) { return maximum(a, b); });
  c.push_back(two("ties share the gradient", var_of({3}, {1, 2, 3}), var_of({3}, {1, 0, 3}),
                  [](const Tensor& a, const Tensor& b) { return maximum(a, b); }));
  return c;
}
LT_GRAD_TEST(minimum) {
  GradCaseList c = binary([](const Tensor& a, const Tensor& b) { return minimum(a, b); });
  c.push_back(two("ties share the gradient", var_of({3}, {1, 2, 3}), var_of({3}, {1, 0, 3}),
                  [](const Tensor& a, const Tensor& b) { return minimum(a, b); }));
  return c;
}
LT_GRAD_TEST(fmod) { return binary([](const Tensor& a, const Tensor& b) { return fmod(a, b); }, -3, 3, 0.7, 1.3, 0.8); }
LT_GRAD_TEST(hypot) { return binary([](const Tensor& a, const Tensor& b) { return hypot(a, b); }, 0.5, 2, -2, -0.5); }
LT_GRAD_TEST(atan2) { return binary([](const Tensor& a, const Tensor& b) { return atan2(a, b); }, -2, 2, 0.5, 2); }
LT_GRAD_TEST(where) {
  Ref cond = random_ref({2, 3}, DType::boolean, 5);
  return {{"condition [2, 3], operands [2, 3] and [3]",
           {fixed(cond), var({2, 3}, 1), var({3}, 2)},
           [](const std::vector<Tensor>& in) { return where(in[0], in[1], in[2]); }},
          {"a C++ scalar branch",
           {fixed(cond), var({1, 3}, 3)},
           [](const std::vector<Tensor>& in) { return where(in[0], 0.5, in[1]); }}};
}
#define LT_COMPARISON_GRAD_TEST(op)                                                                  \
  LT_GRAD_TEST(op) {                                                                                 \
    return {two("[2, 3] and [3]", var({2, 3}, 1), var({3}, 2), [](const Tensor& a, const Tensor& b) { \
      return op(a, b);                                                                               \
    })};                                                                                             \
  }
LT_COMPARISON_GRAD_TEST(eq)
LT_COMPARISON_GRAD_TEST(ne)
LT_COMPARISON_GRAD_TEST(lt)
LT_COMPARISON_GRAD_TEST(le)
LT_COMPARISON_GRAD_TEST(gt)
LT_COMPARISON_GRAD_TEST(ge)
LT_COMPARISON_GRAD_TEST(logical_and)
LT_COMPARISON_GRAD_TEST(logical_or)
#undef LT_COMPARISON_GRAD_TEST

// ---- reductions ----
LT_GRAD_TEST(sum) { return reduction([](const Tensor& x, Dims d, bool k) { return sum(x, d, k); }); }
LT_GRAD_TEST(mean) { return reduction([](const Tensor& x, Dims d, bool k) { return mean(x, d, k); }); }
LT_GRAD_TEST(prod) {
  GradCaseList c = reduction([](const Tensor& x, Dims d, bool k) { return prod(x, d, k); }, 0.5, 1.5);
  c.push_back(one("rows with one and with two zeros", var_of({3, 3}, {1.5, 0, 2, 0, 3, 0, -1, 2, 0.5}),
                  [](const Tensor& x) { return prod(x, 1); }));
  return c;
}
LT_GRAD_TEST(amax) {
  GradCaseList c = reduction([](const Tensor& x, Dims d, bool k) { return amax(x, d, k); });
  c.push_back(one("a tie shares the gradient", var_of({2, 3}, {1, 3, 3, 0, -1, 2}), [](const Tensor& x) { return amax(x, 1); }));
  return c;
}
LT_GRAD_TEST(amin) {
  GradCaseList c = reduction([](const Tensor& x, Dims d, bool k) { return amin(x, d, k); });
  c.push_back(one("a tie shares the gradient", var_of({2, 3}, {1, -3, -3, 0, -1, 2}), [](const Tensor& x) { return amin(x, 1); }));
  return c;
}
// One element with correction 1 has no degree of freedom (NaN): rank 0 takes correction 0.
LT_GRAD_TEST(var) {
  GradCaseList c = reduction([](const Tensor& x, Dims d, bool k) { return var(x, d, x.dim() == 0 ? 0 : 1, k); });
  c.push_back(one("correction 0", var({3, 4}, 7), [](const Tensor& x) { return var(x, Dims{1}, 0); }));
  return c;
}
LT_GRAD_TEST(std) {
  GradCaseList c = reduction([](const Tensor& x, Dims d, bool k) { return lt::std(x, d, x.dim() == 0 ? 0 : 1, k); });
  c.push_back(one("correction 0", var({3, 4}, 7), [](const Tensor& x) { return lt::std(x, Dims{1}, 0); }));
  return c;
}
LT_GRAD_TEST(logsumexp) { return reduction([](const Tensor& x, Dims d, bool k) { return logsumexp(x, d, k); }); }
LT_GRAD_TEST(argmax) { return {one("dim 1", var({3, 4}, 1), [](const Tensor& x) { return argmax(x, 1); })}; }
LT_GRAD_TEST(argmin) { return {one("dim 1", var({3, 4}, 1), [](const Tensor& x) { return argmin(x, 1); })}; }
LT_GRAD_TEST(all) { return {one("every dim", var({3, 4}, 1), [](const Tensor& x) { return all(x); })}; }
LT_GRAD_TEST(any) { return {one("dim 0", var({3, 4}, 1), [](const Tensor& x) { return any(x, 0); })}; }

// ---- movement ----
LT_GRAD_TEST(reshape) {
  return {one("[2, 3, 2] to [3, 4]", var({2, 3, 2}, 1), [](const Tensor& x) { return x.reshape({3, -1}); }),
          one("unsqueeze, squeeze, flatten", var({2, 3}, 2),
              [](const Tensor& x) { return x.unsqueeze(1).flatten().reshape({1, 6}).squeeze(); })};
}
LT_GRAD_TEST(permute) {
  return {one("[2, 3, 4] permuted", var({2, 3, 4}, 1), [](const Tensor& x) { return x.permute({2, 0, 1}); }),
          one("transpose", var({3, 2}, 2), [](const Tensor& x) { return x.t(); })};
}
LT_GRAD_TEST(expand) {
  return {one("[3, 1] to [2, 3, 4]", var({3, 1}, 1), [](const Tensor& x) { return x.expand({2, 3, 4}); }),
          one("rank 0 to [2, 2]", var({}, 2), [](const Tensor& x) { return x.expand({2, 2}); })};
}
LT_GRAD_TEST(slice) {
  return {one("dim 1, start 1, step 1", var({3, 5}, 1), [](const Tensor& x) { return x.slice(1, 1, 4); }),
          one("dim 0, start 1, step 2", var({6, 2}, 2), [](const Tensor& x) { return x.slice(0, 1, std::nullopt, 2); }),
          one("step 3 past the end", var({2, 7}, 3), [](const Tensor& x) { return x.slice(1, 2, 7, 3); }),
          one("select and narrow", var({3, 4}, 4), [](const Tensor& x) { return x.select(0, 1) * x.narrow(1, 1, 2).sum(); }),
          one("split and chunk", var({4, 3}, 5), [](const Tensor& x) { return x.split(3)[1].sum(0) + x.chunk(3, 1)[2].sum(); })};
}
LT_GRAD_TEST(cat) {
  return {{"three tensors along dim 1",
           {var({2, 1}, 1), var({2, 3}, 2), var({2, 2}, 3)},
           [](const std::vector<Tensor>& in) { return cat({in[0], in[1], in[2]}, 1); }},
          {"a legacy empty tensor is skipped",
           {var({0}, 4), var({2, 3}, 5)},
           [](const std::vector<Tensor>& in) { return cat({in[0], in[1]}, 0); },
           1e-6, 1e-5, 1e-6, false},
          {"stack", {var({2, 3}, 6), var({2, 3}, 7)}, [](const std::vector<Tensor>& in) { return stack({in[0], in[1]}, 1); }}};
}
LT_GRAD_TEST(pad) {
  return {one("pad the last two dims", var({2, 3}, 1), [](const Tensor& x) { return pad(x, {1, 2, 0, 1}, 0.5); }),
          one("crop and pad", var({3, 4}, 2), [](const Tensor& x) { return pad(x, {-1, 2, 1, -2}); })};
}
LT_GRAD_TEST(flip) { return {one("dims 0 and 2", var({2, 3, 2}, 1), [](const Tensor& x) { return x.flip({0, -1}); })}; }
LT_GRAD_TEST(tril) { return {one("diagonal -1, batched", var({2, 3, 4}, 1), [](const Tensor& x) { return x.tril(-1); })}; }
LT_GRAD_TEST(triu) { return {one("diagonal 1", var({4, 3}, 1), [](const Tensor& x) { return x.triu(1); })}; }
LT_GRAD_TEST(contiguous) { return {one("of a transposed view", var({3, 4}, 1), [](const Tensor& x) { return x.t().contiguous(); })}; }

// ---- indexing ----
LT_GRAD_TEST(index_select) {
  return {{"dim 1, repeated indices",
           {var({3, 4}, 1), fixed(index_ref({5}, {3, 0, 3, 1, 3}))},
           [](const std::vector<Tensor>& in) { return in[0].index_select(1, in[1]); }},
          {"zero-dim index",
           {var({3, 4}, 2), fixed(index_ref({}, {2}))},
           [](const std::vector<Tensor>& in) { return in[0].index_select(0, in[1]); }},
          {"embedding", {var({5, 3}, 3), fixed(index_ref({2, 2}, {4, 0, 4, 2}))},
           [](const std::vector<Tensor>& in) { return embedding(in[0], in[1]); }}};
}
LT_GRAD_TEST(gather) {
  return {{"dim 1, index smaller than the input",
           {var({3, 4}, 1), fixed(index_ref({2, 3}, {0, 3, 3, 1, 1, 2}))},
           [](const std::vector<Tensor>& in) { return in[0].gather(1, in[1]); }}};
}
LT_GRAD_TEST(scatter_add) {
  return {{"dim 0, src larger than the index",
           {var({3, 4}, 1), fixed(index_ref({2, 3}, {0, 2, 2, 1, 2, 0})), var({3, 4}, 2)},
           [](const std::vector<Tensor>& in) { return in[0].scatter_add(0, in[1], in[2]); }}};
}

// ---- contractions ----
LT_GRAD_TEST(matmul) {
  auto mm = [](const Tensor& a, const Tensor& b) { return matmul(a, b); };
  return {two("[2, 3] x [3, 4]", var({2, 3}, 1), var({3, 4}, 2), mm),
          two("vector x matrix", var({3}, 3), var({3, 2}, 4), mm),
          two("matrix x vector", var({2, 3}, 5), var({3}, 6), mm),
          two("vector x vector", var({3}, 7), var({3}, 8), mm),
          two("batch dims broadcast", var({2, 1, 2, 3}, 9), var({3, 3, 2}, 10), mm),
          two("batched x matrix", var({2, 2, 3}, 11), var({3, 2}, 12), mm),
          two("rank 4 x matrix, the batch folded into rows", var({2, 3, 2, 3}, 13), var({3, 4}, 14), mm),
          two("batched x vector", var({2, 2, 3}, 15), var({3}, 16), mm),
          two("transposed batch x matrix", var({2, 3, 2}, 17), var({3, 2}, 18),
              [](const Tensor& a, const Tensor& b) { return matmul(a.transpose(1, 2), b); })};
}
LT_GRAD_TEST(conv2d) {
  auto conv = [](Pair2 stride, Pair2 padding, Pair2 dilation, std::int64_t groups) {
    return [=](const std::vector<Tensor>& in) { return conv2d(in[0], in[1], in[2], stride, padding, dilation, groups); };
  };
  return {{"3x3, bias", {var({2, 2, 5, 5}, 1), var({3, 2, 3, 3}, 2), var({3}, 3)}, conv(1, 0, 1, 1)},
          {"stride 2, padding 1, dilation 2", {var({1, 2, 7, 6}, 4), var({2, 2, 3, 2}, 5), var({2}, 6)}, conv({2, 1}, {1, 2}, 2, 1)},
          {"groups 2", {var({2, 4, 4, 4}, 7), var({4, 2, 2, 2}, 8), var({4}, 9)}, conv(1, 1, 1, 2)},
          {"stride leaving rows unread", {var({1, 1, 6, 7}, 10), var({2, 1, 2, 2}, 11), var({2}, 12)}, conv(3, 0, 1, 1)},
          {"padding beyond the kernel's reach", {var({1, 1, 3, 3}, 13), var({1, 1, 1, 2}, 14), var({1}, 15)}, conv(1, 2, 1, 1)}};
}

LT_GRAD_TEST(conv2d_input_grad) {
  auto op = [](Shape x, Pair2 stride, Pair2 padding, Pair2 dilation, std::int64_t groups) {
    return [=](const std::vector<Tensor>& in) { return conv2d_input_grad(in[0], in[1], x, stride, padding, dilation, groups); };
  };
  return {{"3x3", {var({2, 3, 3, 3}, 1), var({3, 2, 3, 3}, 2)}, op({2, 2, 5, 5}, 1, 0, 1, 1)},
          {"stride 2, padding 1, dilation 2, groups 2", {var({1, 4, 3, 8}, 3), var({4, 1, 3, 2}, 4)},
           op({1, 2, 7, 6}, {2, 1}, {1, 2}, 2, 2)}};
}
LT_GRAD_TEST(conv2d_weight_grad) {
  auto op = [](Shape w, Pair2 stride, Pair2 padding, Pair2 dilation, std::int64_t groups) {
    return [=](const std::vector<Tensor>& in) { return conv2d_weight_grad(in[0], w, in[1], stride, padding, dilation, groups); };
  };
  return {{"3x3", {var({2, 2, 5, 5}, 5), var({2, 3, 3, 3}, 6)}, op({3, 2, 3, 3}, 1, 0, 1, 1)},
          {"stride 2, padding 1, dilation 2, groups 2", {var({1, 2, 7, 6}, 7), var({1, 4, 3, 8}, 8)},
           op({4, 1, 3, 2}, {2, 1}, {1, 2}, 2, 2)}};
}

// ---- windows ----
LT_GRAD_TEST(max_pool2d) {
  return {one("2x2", var({2, 2, 4, 4}, 1), [](const Tensor& x) { return max_pool2d(x, 2); }),
          one("3x3, stride 2, padding 1", var({1, 2, 5, 6}, 2), [](const Tensor& x) { return max_pool2d(x, 3, 2, 1); }),
          one("ceil mode, dilation 2", var({1, 1, 7, 6}, 3), [](const Tensor& x) { return max_pool2d(x, 2, 2, 0, 2, true); }),
          one("unbatched, overlapping", var({2, 4, 4}, 4), [](const Tensor& x) { return max_pool2d(x, 2, 1); })};
}
LT_GRAD_TEST(max_pool2d_backward) {
  // Linear in the output's gradient; x only chooses elements (its gradient is zero).
  return {{"2x2", {var({2, 2, 2, 2}, 5), var({2, 2, 4, 4}, 6)},
           [](const std::vector<Tensor>& in) { return max_pool2d_backward(in[0], in[1], 2); }},
          {"3x3, stride 2, padding 1, ceil mode, overlapping", {var({1, 2, 3, 4}, 7), var({1, 2, 5, 6}, 8)},
           [](const std::vector<Tensor>& in) { return max_pool2d_backward(in[0], in[1], 3, Pair2{2}, 1, 1, true); }}};
}
LT_GRAD_TEST(avg_pool2d) {
  return {one("2x2", var({2, 2, 4, 4}, 1), [](const Tensor& x) { return avg_pool2d(x, 2); }),
          one("3x3, stride 2, padding 1", var({1, 2, 5, 6}, 2), [](const Tensor& x) { return avg_pool2d(x, 3, 2, 1); }),
          one("padding not counted, ceil mode", var({1, 1, 5, 5}, 3),
              [](const Tensor& x) { return avg_pool2d(x, 2, 2, 1, true, false); })};
}
LT_GRAD_TEST(adaptive_avg_pool2d) {
  return {one("7x5 to 3x2", var({2, 1, 7, 5}, 1), [](const Tensor& x) { return adaptive_avg_pool2d(x, {3, 2}); }),
          one("to 1x1", var({1, 3, 4, 4}, 2), [](const Tensor& x) { return adaptive_avg_pool2d(x, 1); })};
}

}  // namespace lt::test
