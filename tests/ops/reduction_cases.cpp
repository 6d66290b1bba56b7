// Reference cases of the reductions, their error paths, and the determinism of long
// reductions across thread counts.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include <oneapi/tbb/global_control.h>

#include "op_harness.hpp"

namespace lt::test {
namespace {

using Row = std::vector<double>;
using RowFn = std::function<double(const Row&)>;
/// Calls the library: the input, the dims as the test spells them, keepdim.
using Call = std::function<Tensor(const Tensor&, const std::vector<std::int64_t>&, bool)>;

const double inf = std::numeric_limits<double>::infinity();
const double nan = std::numeric_limits<double>::quiet_NaN();

/// Reduces `x` over `dims` (negative ones count from the end; none: every dim) by handing
/// each row's values, in row-major order, to `f`; results are rounded to `out`.
Ref reduce_ref(const Ref& x, const std::vector<std::int64_t>& dims, bool keepdim, DType out, const RowFn& f) {
  auto rank = static_cast<std::int64_t>(x.shape.size());
  std::vector<bool> reduced(x.shape.size(), dims.empty());
  if (rank > 0)
    for (std::int64_t d : dims) reduced[static_cast<std::size_t>(d < 0 ? d + rank : d)] = true;
  Ref r{{}, out, {}};
  std::int64_t outputs = 1;
  for (std::size_t d = 0; d < x.shape.size(); ++d) {
    if (!reduced[d]) {
      r.shape.push_back(x.shape[d]);
      outputs *= x.shape[d];
    } else if (keepdim) {
      r.shape.push_back(1);
    }
  }
  std::vector<Row> rows(static_cast<std::size_t>(outputs));
  std::vector<std::int64_t> idx(x.shape.size(), 0);
  for (std::int64_t k = 0; k < x.numel(); ++k) {
    std::int64_t o = 0;
    for (std::size_t d = 0; d < x.shape.size(); ++d)
      if (!reduced[d]) o = o * x.shape[d] + idx[d];
    rows[static_cast<std::size_t>(o)].push_back(x.v[static_cast<std::size_t>(k)]);
    for (auto d = static_cast<std::int64_t>(x.shape.size()) - 1; d >= 0; --d) {
      auto u = static_cast<std::size_t>(d);
      if (++idx[u] < x.shape[u]) break;
      idx[u] = 0;
    }
  }
  for (const Row& row : rows) r.v.push_back(round_to(out, f(row)));
  return r;
}

bool has_nan(const Row& r) { return std::any_of(r.begin(), r.end(), [](double x) { return std::isnan(x); }); }

double row_sum(const Row& r) {
  double s = 0;
  for (double x : r) s += x;
  return s;
}
double row_mean(const Row& r) { return row_sum(r) / static_cast<double>(r.size()); }
double row_prod(const Row& r) {
  double p = 1;
  for (double x : r) p *= x;
  return p;
}
double row_max(const Row& r) { return has_nan(r) ? nan : *std::max_element(r.begin(), r.end()); }
double row_min(const Row& r) { return has_nan(r) ? nan : *std::min_element(r.begin(), r.end()); }
/// First NaN, else first extreme element.
double row_arg(const Row& r, bool max) {
  for (std::size_t k = 0; k < r.size(); ++k)
    if (std::isnan(r[k])) return static_cast<double>(k);
  auto it = max ? std::max_element(r.begin(), r.end()) : std::min_element(r.begin(), r.end());
  return static_cast<double>(it - r.begin());
}
RowFn row_var(double correction, bool sqrt) {
  return [=](const Row& r) {
    double m = row_mean(r), ss = 0;
    for (double x : r) ss += (x - m) * (x - m);
    double v = ss / std::max(0.0, static_cast<double>(r.size()) - correction);
    return sqrt ? std::sqrt(v) : v;
  };
}
double row_logsumexp(const Row& r) {
  if (has_nan(r)) return nan;
  double m = -inf;
  for (double x : r) m = std::max(m, x);
  if (std::isinf(m)) return m;  // all -inf, or some +inf
  double s = 0;
  for (double x : r) s += std::exp(x - m);
  return m + std::log(s);
}
double row_all(const Row& r) { return std::all_of(r.begin(), r.end(), [](double x) { return x != 0; }); }
double row_any(const Row& r) { return std::any_of(r.begin(), r.end(), [](double x) { return x != 0; }); }

std::string dims_text(const std::vector<std::int64_t>& dims, bool keepdim) {
  std::string s = "dims {";
  for (std::size_t k = 0; k < dims.size(); ++k) s += (k ? ", " : "") + std::to_string(dims[k]);
  return s + "}" + (keepdim ? " keepdim" : "");
}

OpCase reduce_case(const std::string& what, const Ref& x, std::vector<std::int64_t> dims, bool keepdim, DType out,
                   const Call& call, const RowFn& f, double rtol = 1e-5) {
  Ref expected = reduce_ref(x, dims, keepdim, out, f);
  OpCase c{what + " " + dims_text(dims, keepdim), {x},
           [call, dims, keepdim](const std::vector<Tensor>& in) { return call(in[0], dims, keepdim); }, expected};
  c.rtol = rtol;
  return c;
}

void append(CaseList& to, CaseList more) { to.insert(to.end(), more.begin(), more.end()); }

/// Dim sets over a rank-3 input (all, single, negative, pairs), with and without keepdim,
/// plus rank 1 and rank 0.
CaseList dim_sets(const std::string& what, const Ref& x3, const Ref& x1, const Ref& x0, DType out, const Call& call,
                  const RowFn& f, double rtol = 1e-5) {
  CaseList cs;
  for (bool keep : {false, true})
    for (const std::vector<std::int64_t>& dims :
         std::vector<std::vector<std::int64_t>>{{}, {0}, {1}, {-1}, {0, 2}, {-3, -2}, {2, 0, 1}})
      cs.push_back(reduce_case(what, x3, dims, keep, out, call, f, rtol));
  cs.push_back(reduce_case(what + " rank 1", x1, {0}, false, out, call, f, rtol));
  cs.push_back(reduce_case(what + " rank 1", x1, {-1}, true, out, call, f, rtol));
  cs.push_back(reduce_case(what + " rank 0", x0, {}, false, out, call, f, rtol));
  cs.push_back(reduce_case(what + " rank 0", x0, {0}, true, out, call, f, rtol));
  cs.push_back(reduce_case(what + " rank 0", x0, {-1}, false, out, call, f, rtol));
  return cs;
}

/// Long rows whose deciding elements lie in different chunks of the kernel: ties of the
/// largest and of the smallest value, NaN late in a row, +inf among -inf, and all -inf.
Ref long_specials() {
  const std::int64_t n = 5000;
  Ref r{{4, n}, DType::f32, std::vector<double>(static_cast<std::size_t>(4 * n), 0.0)};
  auto at = [&](std::int64_t row, std::int64_t k) -> double& { return r.v[static_cast<std::size_t>(row * n + k)]; };
  at(0, 100) = at(0, 3000) = 5;
  at(0, 200) = at(0, 4000) = -5;
  at(1, 10) = 5;
  at(1, 4500) = at(1, 4600) = nan;
  for (std::int64_t k = 0; k < n; ++k) at(2, k) = at(3, k) = -inf;
  at(2, 2500) = inf;
  return r;
}

/// Rows longer than one chunk of the kernel: a few long rows (split across tasks), many
/// long rows, rows whose elements lie far apart (gathered for many outputs at once), and
/// special values in far chunks. `one_dim`: for ops that reduce at most one dim.
CaseList long_rows(const std::string& what, DType in, DType out, const Call& call, const RowFn& f, double lo = -2,
                   double hi = 2, bool one_dim = false) {
  std::vector<std::int64_t> apart = one_dim ? std::vector<std::int64_t>{0} : std::vector<std::int64_t>{0, 2};
  return {reduce_case(what + " few long rows", random_ref({3, 5001}, in, 91, lo, hi), {1}, false, out, call, f),
          reduce_case(what + " many long rows", random_ref({130, 2500}, in, 92, lo, hi), {-1}, false, out, call, f),
          reduce_case(what + " strided rows", random_ref({4100, 3}, in, 93, lo, hi), {0}, false, out, call, f),
          reduce_case(what + " everything", random_ref({70, 80}, in, 94, lo, hi), {}, false, out, call, f),
          reduce_case(what + " outer dim, many outputs", random_ref({2100, 130}, in, 95, lo, hi), {0}, false, out, call, f),
          reduce_case(what + " outer dims apart", random_ref({40, 3, 60, 50}, in, 96, lo, hi), apart, true, out, call, f),
          reduce_case(what + " runs of 280 across dims", random_ref({9, 3, 7, 40}, in, 97, lo, hi), one_dim ? apart : std::vector<std::int64_t>{0, 2, 3},
                      false, out, call, f),
          reduce_case(what + " runs of 45", random_ref({50, 2, 45}, in, 98, lo, hi), one_dim ? std::vector<std::int64_t>{0} : apart, true,
                      out, call, f),
          reduce_case(what + " specials in far chunks", long_specials(), {1}, false, out, call, f)};
}

Call dims_call(Tensor (*fn)(const Tensor&, Dims, bool, Site)) {
  return [fn](const Tensor& x, const std::vector<std::int64_t>& d, bool keep) {
    return fn(x, Dims(d), keep, Site::current());
  };
}

Ref x3(DType t = DType::f32, std::uint32_t seed = 21) { return random_ref({3, 4, 5}, t, seed); }
Ref x1(DType t = DType::f32) { return random_ref({7}, t, 22); }
Ref x0(DType t = DType::f32) { return random_ref({}, t, 23); }
/// Integer-valued, with zeros: rows hold both true and false values.
Ref sparse(std::vector<std::int64_t> shape, DType t, std::uint32_t seed) {
  Ref r = random_ref(std::move(shape), DType::i32, seed, 0, 3);
  r.dtype = t;
  for (double& x : r.v) x = round_to(t, x);
  return r;
}
const Ref empty_rows = random_ref({0, 3});
const Ref specials_2d = values_ref({2, 5}, DType::f32, {nan, 1, -inf, 2, 0, inf, 1, -1, inf, 3});

LT_OP_TEST(sum) {
  Call c = dims_call(&lt::sum);
  CaseList cs = dim_sets("f32", x3(), x1(), x0(), DType::f32, c, row_sum);
  CaseList long_sums = long_rows("f32", DType::f32, DType::f32, c, row_sum);
  // f32 rows add in f32 lanes of up to 64 values each, as PyTorch's f32 sums add in f32: the
  // error follows the magnitude of the partial sums (tens here), not of a result that cancels.
  for (OpCase& k : long_sums) k.atol = 64 * 0x1p-24 * 16;
  append(cs, std::move(long_sums));
  cs.push_back(reduce_case("f64", x3(DType::f64), {1}, false, DType::f64, c, row_sum, 1e-12));
  cs.push_back(reduce_case("i32 gives i64", random_ref({3, 4, 5}, DType::i32, 24, -100, 100), {0, 2}, false, DType::i64, c, row_sum));
  cs.push_back(reduce_case("i64", random_ref({3, 4}, DType::i64, 25, -1000, 1000), {}, false, DType::i64, c, row_sum));
  cs.push_back(reduce_case("bool counts", random_ref({3, 8}, DType::boolean, 26), {1}, true, DType::i64, c, row_sum));
  cs.push_back(reduce_case("NaN and inf", specials_2d, {1}, false, DType::f32, c, row_sum));
  cs.push_back(reduce_case("specials", special_ref(), {}, false, DType::f32, c, row_sum));
  cs.push_back(reduce_case("empty dim gives 0", empty_rows, {0}, false, DType::f32, c, row_sum));
  cs.push_back(reduce_case("empty tensor", empty_rows, {}, true, DType::f32, c, row_sum));
  cs.push_back({"method, no dims", {x3()}, [](auto& in) { return in[0].sum(); }, reduce_ref(x3(), {}, false, DType::f32, row_sum)});
  cs.push_back({"method, int dim", {x3()}, [](auto& in) { return in[0].sum(-2, true); },
                reduce_ref(x3(), {1}, true, DType::f32, row_sum)});
  return cs;
}

LT_OP_TEST(mean) {
  Call c = dims_call(&lt::mean);
  CaseList cs = dim_sets("f32", x3(), x1(), x0(), DType::f32, c, row_mean);
  append(cs, long_rows("f32", DType::f32, DType::f32, c, row_mean));
  cs.push_back(reduce_case("f64", x3(DType::f64), {0, 1}, true, DType::f64, c, row_mean, 1e-12));
  cs.push_back(reduce_case("NaN and inf", specials_2d, {1}, false, DType::f32, c, row_mean));
  cs.push_back(reduce_case("empty dim gives NaN", empty_rows, {0}, false, DType::f32, c, row_mean));
  cs.push_back({"method, int dim", {x3()}, [](auto& in) { return in[0].mean(0); }, reduce_ref(x3(), {0}, false, DType::f32, row_mean)});
  return cs;
}

LT_OP_TEST(prod) {
  Call c = dims_call(&lt::prod);
  Ref near_one = random_ref({3, 4, 5}, DType::f32, 31, 0.5, 1.5);
  CaseList cs = dim_sets("f32", near_one, x1(), x0(), DType::f32, c, row_prod);
  append(cs, long_rows("f32", DType::f32, DType::f32, c, row_prod, 0.999, 1.001));
  cs.push_back(reduce_case("f64", random_ref({3, 4}, DType::f64, 32), {1}, false, DType::f64, c, row_prod, 1e-12));
  cs.push_back(reduce_case("i32 gives i64", random_ref({3, 6}, DType::i32, 33, -9, 9), {1}, false, DType::i64, c, row_prod));
  cs.push_back(reduce_case("bool", random_ref({4, 3}, DType::boolean, 34), {-1}, false, DType::i64, c, row_prod));
  cs.push_back(reduce_case("NaN and inf", specials_2d, {1}, false, DType::f32, c, row_prod));
  cs.push_back(reduce_case("empty dim gives 1", empty_rows, {0}, true, DType::f32, c, row_prod));
  cs.push_back({"method, no dims", {near_one}, [](auto& in) { return in[0].prod(); },
                reduce_ref(near_one, {}, false, DType::f32, row_prod)});
  return cs;
}

CaseList extreme_cases(Tensor (*fn)(const Tensor&, Dims, bool, Site), const RowFn& f) {
  Call c = dims_call(fn);
  CaseList cs = dim_sets("f32", x3(), x1(), x0(), DType::f32, c, f);
  append(cs, long_rows("f32", DType::f32, DType::f32, c, f));
  cs.push_back(reduce_case("f64", x3(DType::f64), {2}, false, DType::f64, c, f, 0));
  cs.push_back(reduce_case("i32 stays i32", random_ref({3, 4, 5}, DType::i32, 41, -50, 50), {1, 2}, false, DType::i32, c, f));
  cs.push_back(reduce_case("i64", random_ref({5, 4}, DType::i64, 42, -50, 50), {0}, true, DType::i64, c, f));
  cs.push_back(reduce_case("bool stays bool", random_ref({4, 3}, DType::boolean, 43), {1}, false, DType::boolean, c, f));
  cs.push_back(reduce_case("NaN propagates", specials_2d, {1}, false, DType::f32, c, f));
  cs.push_back(reduce_case("NaN propagates", specials_2d, {0}, false, DType::f32, c, f));
  cs.push_back(reduce_case("infinities", values_ref({2, 3}, DType::f32, {-inf, -inf, -inf, 1, inf, -2}), {1}, false,
                           DType::f32, c, f));
  cs.push_back(reduce_case("empty rows, none reduced", empty_rows, {1}, false, DType::f32, c, f));
  return cs;
}

LT_OP_TEST(amax) {
  CaseList cs = extreme_cases(&lt::amax, row_max);
  cs.push_back({"method", {x3()}, [](auto& in) { return in[0].amax(-1, true); }, reduce_ref(x3(), {2}, true, DType::f32, row_max)});
  return cs;
}

LT_OP_TEST(amin) {
  CaseList cs = extreme_cases(&lt::amin, row_min);
  cs.push_back({"method", {x3()}, [](auto& in) { return in[0].amin(); }, reduce_ref(x3(), {}, false, DType::f32, row_min)});
  return cs;
}

/// argmax and argmin reduce one dim or, with none, the flattened tensor.
CaseList arg_cases(Tensor (*fn)(const Tensor&, std::optional<std::int64_t>, bool, Site), bool max) {
  RowFn f = [max](const Row& r) { return row_arg(r, max); };
  Call c = [fn](const Tensor& x, const std::vector<std::int64_t>& d, bool keep) {
    return fn(x, d.empty() ? std::nullopt : std::optional<std::int64_t>(d[0]), keep, Site::current());
  };
  CaseList cs;
  for (bool keep : {false, true})
    for (std::vector<std::int64_t> dims : std::vector<std::vector<std::int64_t>>{{}, {0}, {1}, {-1}})
      cs.push_back(reduce_case("f32", x3(), dims, keep, DType::i64, c, f));
  cs.push_back(reduce_case("rank 0", x0(), {}, false, DType::i64, c, f));
  cs.push_back(reduce_case("rank 0", x0(), {0}, true, DType::i64, c, f));
  cs.push_back(reduce_case("rank 0", x0(), {-1}, false, DType::i64, c, f));
  append(cs, long_rows("f32", DType::f32, DType::i64, c, f, -2, 2, true));
  Ref ties = values_ref({2, 6}, DType::f32, {1, 3, 3, -2, -2, 3, -5, 0, 0, -5, 2, 2});
  cs.push_back(reduce_case("ties give the first", ties, {1}, false, DType::i64, c, f));
  cs.push_back(reduce_case("ties give the first", ties, {}, false, DType::i64, c, f));
  cs.push_back(reduce_case("first NaN wins", specials_2d, {1}, false, DType::i64, c, f));
  cs.push_back(reduce_case("first NaN wins", specials_2d, {}, false, DType::i64, c, f));
  cs.push_back(reduce_case("infinities", values_ref({2, 3}, DType::f32, {-inf, -inf, -inf, 1, inf, inf}), {1}, false,
                           DType::i64, c, f));
  cs.push_back(reduce_case("i32", random_ref({4, 6}, DType::i32, 51, -3, 3), {1}, false, DType::i64, c, f));
  cs.push_back(reduce_case("i64", random_ref({4, 6}, DType::i64, 52, -3, 3), {0}, true, DType::i64, c, f));
  cs.push_back(reduce_case("f64", x3(DType::f64), {1}, false, DType::i64, c, f));
  cs.push_back(reduce_case("empty rows, none reduced", empty_rows, {1}, false, DType::i64, c, f));
  return cs;
}

LT_OP_TEST(argmax) {
  CaseList cs = arg_cases(&lt::argmax, true);
  cs.push_back({"method", {x3()}, [](auto& in) { return in[0].argmax(1, true); },
                reduce_ref(x3(), {1}, true, DType::i64, [](const Row& r) { return row_arg(r, true); })});
  return cs;
}

LT_OP_TEST(argmin) {
  CaseList cs = arg_cases(&lt::argmin, false);
  cs.push_back({"method", {x3()}, [](auto& in) { return in[0].argmin(); },
                reduce_ref(x3(), {}, false, DType::i64, [](const Row& r) { return row_arg(r, false); })});
  return cs;
}

CaseList variance_cases(Tensor (*fn)(const Tensor&, Dims, std::int64_t, bool, Site), bool sqrt) {
  auto with = [fn](std::int64_t correction) -> Call {
    return [fn, correction](const Tensor& x, const std::vector<std::int64_t>& d, bool keep) {
      return fn(x, Dims(d), correction, keep, Site::current());
    };
  };
  CaseList cs = dim_sets("f32", x3(), x1(), x0(), DType::f32, with(1), row_var(1, sqrt), 1e-4);
  append(cs, long_rows("f32", DType::f32, DType::f32, with(1), row_var(1, sqrt)));
  cs.push_back(reduce_case("correction 0", x3(), {1, 2}, false, DType::f32, with(0), row_var(0, sqrt)));
  cs.push_back(reduce_case("correction 2", x3(), {2}, true, DType::f32, with(2), row_var(2, sqrt)));
  Ref pairs = random_ref({3, 2}, DType::f32, 61);
  cs.push_back(reduce_case("correction = N gives inf", pairs, {1}, false, DType::f32, with(2), row_var(2, sqrt)));
  cs.push_back(reduce_case("correction > N gives inf", pairs, {1}, false, DType::f32, with(5), row_var(5, sqrt)));
  cs.push_back(reduce_case("f64", x3(DType::f64), {0}, false, DType::f64, with(1), row_var(1, sqrt), 1e-12));
  cs.push_back(reduce_case("NaN and inf", specials_2d, {1}, false, DType::f32, with(1), row_var(1, sqrt)));
  cs.push_back(reduce_case("constant rows", values_ref({2, 3}, DType::f32, {0.1, 0.1, 0.1, -7, -7, -7}), {1}, false,
                           DType::f32, with(1), row_var(1, sqrt)));
  cs.push_back(reduce_case("empty dim gives NaN", empty_rows, {0}, false, DType::f32, with(1), row_var(1, sqrt)));
  return cs;
}

LT_OP_TEST(var) {
  CaseList cs = variance_cases(&lt::var, false);
  cs.push_back({"method, whole", {x3()}, [](auto& in) { return in[0].var(); }, reduce_ref(x3(), {}, false, DType::f32, row_var(1, false))});
  cs.push_back({"method, dims", {x3()}, [](auto& in) { return in[0].var(Dims{-1}, 0, true); },
                reduce_ref(x3(), {2}, true, DType::f32, row_var(0, false))});
  return cs;
}

LT_OP_TEST(std) {
  CaseList cs = variance_cases(&lt::std, true);
  cs.push_back({"method, whole", {x3()}, [](auto& in) { return in[0].std(0); }, reduce_ref(x3(), {}, false, DType::f32, row_var(0, true))});
  cs.push_back({"free, whole", {x3()}, [](auto& in) { return lt::std(in[0]); }, reduce_ref(x3(), {}, false, DType::f32, row_var(1, true))});
  return cs;
}

LT_OP_TEST(logsumexp) {
  Call c = dims_call(&lt::logsumexp);
  CaseList cs = dim_sets("f32", x3(), x1(), x0(), DType::f32, c, row_logsumexp);
  append(cs, long_rows("f32", DType::f32, DType::f32, c, row_logsumexp, -30, 30));
  cs.push_back(reduce_case("f64", random_ref({3, 4}, DType::f64, 71, -500, 500), {1}, false, DType::f64, c, row_logsumexp, 1e-12));
  cs.push_back(reduce_case("large values do not overflow", random_ref({2, 5}, DType::f32, 72, 80, 100), {1}, false,
                           DType::f32, c, row_logsumexp));
  cs.push_back(reduce_case("i32 gives f32", random_ref({3, 4}, DType::i32, 73, -5, 5), {0}, false, DType::f32, c, row_logsumexp));
  cs.push_back(reduce_case("NaN and inf", specials_2d, {1}, false, DType::f32, c, row_logsumexp));
  cs.push_back(reduce_case("all -inf gives -inf", values_ref({2, 3}, DType::f32, {-inf, -inf, -inf, -inf, 1, 2}), {1},
                           true, DType::f32, c, row_logsumexp));
  cs.push_back(reduce_case("empty dim gives -inf", empty_rows, {0}, false, DType::f32, c, row_logsumexp));
  cs.push_back({"method", {x3()}, [](auto& in) { return in[0].logsumexp(Dims{0, -1}); },
                reduce_ref(x3(), {0, 2}, false, DType::f32, row_logsumexp)});
  return cs;
}

CaseList truth_cases(Tensor (*fn)(const Tensor&, Dims, bool, Site), const RowFn& f) {
  Call c = dims_call(fn);
  CaseList cs = dim_sets("f32", sparse({3, 4, 5}, DType::f32, 81), sparse({7}, DType::f32, 82),
                         sparse({}, DType::f32, 83), DType::boolean, c, f);
  cs.push_back(reduce_case("bool", random_ref({4, 3}, DType::boolean, 84), {1}, false, DType::boolean, c, f));
  cs.push_back(reduce_case("i32", sparse({4, 3}, DType::i32, 85), {0}, true, DType::boolean, c, f));
  cs.push_back(reduce_case("i64", sparse({4, 3}, DType::i64, 86), {}, false, DType::boolean, c, f));
  cs.push_back(reduce_case("f64", sparse({4, 3}, DType::f64, 87), {1}, false, DType::boolean, c, f));
  cs.push_back(reduce_case("NaN is true", values_ref({2, 2}, DType::f32, {nan, 1, nan, 0}), {1}, false, DType::boolean, c, f));
  cs.push_back(reduce_case("long rows", sparse({3, 5001}, DType::f32, 88), {1}, false, DType::boolean, c, f));
  cs.push_back(reduce_case("long rows, specials", long_specials(), {1}, false, DType::boolean, c, f));
  Ref ones = values_ref({2, 4500}, DType::f32, std::vector<double>(9000, 1.0));
  ones.v[5] = 0;     // the first chunk of the first row decides it
  ones.v[8999] = 0;  // only the last chunk of the second row decides it
  cs.push_back(reduce_case("long rows, one zero", ones, {1}, false, DType::boolean, c, f));
  cs.push_back(reduce_case("empty dim", empty_rows, {0}, false, DType::boolean, c, f));
  return cs;
}

LT_OP_TEST(all) {
  CaseList cs = truth_cases(&lt::all, row_all);
  cs.push_back({"method", {sparse({4, 3}, DType::i32, 89)}, [](auto& in) { return in[0].all(); },
                reduce_ref(sparse({4, 3}, DType::i32, 89), {}, false, DType::boolean, row_all)});
  return cs;
}

LT_OP_TEST(any) {
  CaseList cs = truth_cases(&lt::any, row_any);
  cs.push_back({"method", {sparse({4, 3}, DType::i32, 89)}, [](auto& in) { return in[0].any(Dims{1}, true); },
                reduce_ref(sparse({4, 3}, DType::i32, 89), {1}, true, DType::boolean, row_any)});
  return cs;
}

// Error paths: the message names the op and the operand, the failed call records nothing,
// and the next op still runs.
class ReductionErrors : public ::testing::TestWithParam<Device> {
 protected:
  void SetUp() override {
    Device dev = GetParam();
    f = from_vector<float>({1, -2, 3, -4, 5, -6}, {2, 3}, dev) * 2;  // pending on the lazy device
    i = from_vector<std::int32_t>({1, 2, 3, 4, 5, 6}, {2, 3}, dev) + 0;
    empty = from_vector<float>({}, {0, 3}, dev) + 0;
  }

  void expect_error(const std::function<void()>& call, std::initializer_list<std::string_view> parts) {
    std::vector<Tensor> live = {f, i, empty};
    std::string before = debug::ir_text(live);
    std::string message;
    try {
      call();
      ADD_FAILURE() << "no lt::Error was raised";
    } catch (const Error& e) {
      message = e.what();
    }
    for (std::string_view p : parts)
      EXPECT_NE(message.find(p), std::string::npos) << "'" << p << "' missing from: " << message;
    EXPECT_EQ(debug::ir_text(live), before) << "the failed call changed the pending graph";
    Tensor next = f.sum(1);
    if (GetParam().is_lazy()) lt::sync();
    EXPECT_EQ(next.to_vector<float>(), (std::vector<float>{4, -10}));
    SetUp();
  }

  Tensor f, i, empty;
};

TEST_P(ReductionErrors, DimOutOfRange) {
  expect_error([&] { f.sum(2); }, {"sum", "out of range", "f32[2, 3]"});
  expect_error([&] { mean(f, Dims{0, -3}); }, {"mean", "out of range"});
  expect_error([&] { f.argmax(5); }, {"argmax", "out of range"});
  expect_error([&] { f.sum().sum(1); }, {"sum", "out of range", "f32[]"});
}

TEST_P(ReductionErrors, RepeatedDim) {
  expect_error([&] { f.sum(Dims{0, -2}); }, {"sum", "more than once", "f32[2, 3]"});
  expect_error([&] { f.var(Dims{1, 1}); }, {"var", "more than once"});
  expect_error([&] { f.sum().amax(Dims{0, -1}); }, {"amax", "more than once", "f32[]"});
}

TEST_P(ReductionErrors, FloatOnlyOpsRefuseIntegers) {
  expect_error([&] { i.mean(); }, {"mean", "floating", "i32[2, 3]"});
  expect_error([&] { i.var(); }, {"var", "floating", "i32[2, 3]"});
  expect_error([&] { i.std(Dims{0}); }, {"std", "floating", "i32[2, 3]"});
}

TEST_P(ReductionErrors, EmptyDimWithoutIdentity) {
  expect_error([&] { empty.argmax(); }, {"argmax", "cannot reduce an empty dim without identity", "f32[0, 3]"});
  expect_error([&] { empty.argmin(0); }, {"argmin", "cannot reduce an empty dim without identity"});
  expect_error([&] { empty.amax(0); }, {"amax", "cannot reduce an empty dim without identity"});
  expect_error([&] { empty.amin(); }, {"amin", "cannot reduce an empty dim without identity"});
}

TEST_P(ReductionErrors, UndefinedAndBool) {
  expect_error([&] { Tensor().sum(0); }, {"sum", "undefined"});
  expect_error([&] { (f > 0).argmax(); }, {"argmax", "bool"});
}

std::string device_name(const ::testing::TestParamInfo<Device>& info) { return info.param.is_lazy() ? "lazy" : "cpu"; }
INSTANTIATE_TEST_SUITE_P(Devices, ReductionErrors, ::testing::Values(cpu, device()), device_name);

TEST(ReductionShapes, ArgmaxWithoutDimKeepsEveryDimWithKeepdim) {
  Tensor x = from_vector<float>({1, 9, 3, 4, 5, 6}, {2, 3});
  Tensor a = argmax(x, std::nullopt, true);
  EXPECT_EQ(a.sizes(), (std::vector<std::int64_t>{1, 1}));
  EXPECT_EQ(a.item<std::int64_t>(), 1);
  EXPECT_EQ(x.argmax().sizes(), std::vector<std::int64_t>{});
}

/// The bits of each element of a float tensor.
std::vector<std::uint32_t> bits(const Tensor& t) {
  std::vector<float> v = t.to_vector<float>();
  std::vector<std::uint32_t> b(v.size());
  std::memcpy(b.data(), v.data(), v.size() * sizeof(float));
  return b;
}

TEST(ReductionDeterminism, LongReductionsAreBitwiseEqualForAnyThreadCount) {
  const std::int64_t n = std::int64_t{1} << 22;
  std::vector<float> values(static_cast<std::size_t>(n));
  std::mt19937 gen(7);
  std::uniform_real_distribution<float> dist(-1000.0f, 1000.0f);
  for (float& v : values) v = dist(gen);
  Tensor x = from_vector(values);
  auto run_all = [&] {
    std::vector<std::vector<std::uint32_t>> r;
    for (const Tensor& t : {x.sum(), x.mean(), x.var(), x.std(), x.logsumexp(Dims{0}), x.prod(),
                            x.reshape({4, -1}).sum(1), x.reshape({-1, 4}).sum(0), x.reshape({2048, -1}).var(Dims{1})})
      r.push_back(bits(t));
    r.push_back({static_cast<std::uint32_t>(x.argmax().item<std::int64_t>())});
    return r;
  };
  std::vector<std::vector<std::uint32_t>> one, two;
  {
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism, 1);
    one = run_all();
  }
  {
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism, 2);
    two = run_all();
  }
  EXPECT_EQ(one, two);
  double exact = 0;
  for (float v : values) exact += v;
  EXPECT_NEAR(x.sum().item<float>(), exact, std::abs(exact) * 1e-6 + 1e-3);
}

/// A row made of runs (a reduction over N, H and W of [N, C, H, W]) is reduced from its runs
/// in place: the result must be bitwise that of the same values laid out as one contiguous
/// row, whatever the run length (multiples of the 32 lanes or not, shorter or longer than a
/// chunk of 2048).
TEST(ReductionRuns, RowsOfRunsGiveTheBitsOfTheirContiguousCopy) {
  for (std::int64_t hw : {32, 45, 144, 576, 3000}) {
    for (DType t : {DType::f32, DType::f64}) {
      Tensor x = (randn({7, 3, 1, hw}, cpu, DType::f64) * exp(randn({7, 3, 1, hw}, cpu, DType::f64) * 4.0)).to(t);
      Tensor rows = x.permute({1, 0, 2, 3}).contiguous().reshape({3, -1});
      for (bool mean_of : {false, true}) {
        Tensor runs = mean_of ? mean(x, Dims{0, 2, 3}) : sum(x, Dims{0, 2, 3});
        Tensor whole = mean_of ? mean(rows, Dims{1}) : sum(rows, Dims{1});
        SCOPED_TRACE("runs of " + std::to_string(hw) + (t == DType::f32 ? " f32" : " f64") + (mean_of ? " mean" : " sum"));
        std::vector<double> a = runs.to(DType::f64).to_vector<double>(), b = whole.to(DType::f64).to_vector<double>();
        ASSERT_EQ(a.size(), 3u);
        for (std::size_t k = 0; k < a.size(); ++k) EXPECT_EQ(std::memcmp(&a[k], &b[k], sizeof(double)), 0) << a[k] << " vs " << b[k];
      }
    }
  }
}

}  // namespace
}  // namespace lt::test
