// Drives the op reference table: every registered op must have cases, and every case must
// match its independent reference on the eager device and on the lazy device, with plain and
// strided inputs. On the lazy device nothing may run before the barrier.
#include <gtest/gtest.h>

#include <lazytensor/runtime/barrier.hpp>  // plans and the loader, checked per case

#include "op_harness.hpp"

namespace lt::test {
namespace {

/// The Ref with its last dim doubled, originals at even positions: sliced with step 2 it
/// gives back the original values through a non-contiguous view.
Ref doubled(const Ref& r) {
  if (r.shape.empty() || r.shape.back() == 0) return r;
  Ref d = r;
  d.shape.back() *= 2;
  d.v.clear();
  for (double x : r.v) {
    d.v.push_back(x);
    d.v.push_back(round_to(r.dtype, 7));  // filler that must never be read
  }
  return d;
}

/// The dtype a case's f32 stands for in the current run (f32, or bf16 or f16 in their runs).
DType as_run(DType t) { return t == DType::f32 ? f32_stands_for() : t; }

/// Whether the low-precision runs take case `c`: it has an f32 operand. Creation ops take a
/// dtype, not operands: their low-precision results are checked in creation_cases.cpp.
bool runs_in_low_precision(const OpDesc& op, const OpCase& c) {
  if (!c.low_precision_variant || op.kind == OpKind::creation || op.kind == OpKind::collective) return false;
  for (const Ref& r : c.inputs)
    if (r.dtype == DType::f32) return true;
  return false;
}

void expect_matches(const Tensor& got, const OpCase& c, const std::string& where) {
  SCOPED_TRACE(where);
  ASSERT_EQ(got.dtype(), as_run(c.expected.dtype)) << "dtype";
  ASSERT_EQ(got.sizes(), c.expected.shape) << "shape";
  // Low-precision results: the f32 result rounded once more, so one unit in the last of
  // their significant bits (bf16's 8: 2^-7 of the value at most; f16's 11: 2^-10) beyond the
  // case's f32 tolerance.
  const double rtol = c.rtol + (got.dtype() == DType::bf16 ? std::ldexp(1.0, -7)
                                : got.dtype() == DType::f16 ? std::ldexp(1.0, -10)
                                                            : 0.0);
  std::vector<double> v = is_low_precision(got.dtype()) ? got.to(DType::f64).to_vector<double>() : got.to_vector<double>();
  ASSERT_EQ(v.size(), c.expected.v.size());
  for (std::size_t k = 0; k < v.size(); ++k) {
    double want = c.expected.v[k], have = v[k];
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(have)) << "element " << k << ": expected NaN, got " << have;
    } else if (std::isinf(want)) {
      EXPECT_EQ(have, want) << "element " << k;
    } else {
      EXPECT_NEAR(have, want, c.atol + rtol * std::abs(want)) << "element " << k;
    }
  }
}

// The registry is a constant: a program's static objects may look ops up before any
// descriptor's own initialisation has run.
static_assert(find_op(OpId::add) == &binary::add && find_op(OpId::sum) == &reduction::sum);

/// The plan the barrier is about to compile for `out`, written and read back as the disk
/// cache reads it: the loader must take every plan the compiler makes, unchanged.
void expect_plan_loads_back(const Tensor& out, const std::string& where) {
  const NodePtr root = out.impl().node;
  const Plan plan = make_plan(make_schedule(std::span(&root, 1)));
  try {
    EXPECT_TRUE(serialize_plan(deserialize_plan(serialize_plan(plan))) == serialize_plan(plan)) << where;
  } catch (const Error& e) {
    ADD_FAILURE() << where << ": the loader refuses the compiled plan: " << e.what();
  }
}

void run_case(const OpDesc& op, const OpCase& c, bool strided, Device dev) {
  std::vector<Tensor> inputs;
  for (const Ref& r : c.inputs) {
    bool make_strided = strided && !r.shape.empty() && r.shape.back() > 0;
    Tensor t = to_tensor(make_strided ? doubled(r) : r);
    if (as_run(r.dtype) != r.dtype) t = t.to(as_run(r.dtype));  // exact: the values are the run dtype's
    t = t.to(dev);
    inputs.push_back(make_strided ? t.slice(-1, 0, std::nullopt, 2) : t);
  }
  std::string where = c.label + (strided ? " [strided]" : "") + " on " + dev.str();
  const std::string counter = "lt::" + std::string(op.name);
  std::int64_t before = metrics::counter(counter);
  Tensor out = c.run(inputs);
  if (dev.is_lazy()) {
    EXPECT_EQ(metrics::counter(counter), before) << where << ": ran before the barrier";
    expect_plan_loads_back(out, where);
    sync(dev);
    if (op.kind != OpKind::leaf) EXPECT_GT(metrics::counter(counter), before) << where << ": op not in the graph";
  }
  expect_matches(out, c, where);
}

class OpReference : public ::testing::TestWithParam<const OpDesc*> {};

TEST_P(OpReference, MatchesPlainLoopReference) {
  const OpDesc& op = *GetParam();
  auto entry = op_table().find(op.id);
  ASSERT_NE(entry, op_table().end()) << op.name << " has no reference cases";
  CaseList cases = entry->second();
  ASSERT_FALSE(cases.empty());
  for (const OpCase& c : cases)
    for (bool strided : {false, true}) {
      if (strided && !c.strided_variant) continue;
      for (Device dev : {cpu, device()}) run_case(op, c, strided, dev);
    }
}

/// The table in a low-precision dtype: each case with f32 operands runs with them stored in
/// it, its reference computed in f64 on the stored values and rounded to it, as the op
/// rounds its f32 result once. An op with f32 cases must have some that run.
void matches_plain_loop_reference_in(DType low, const OpDesc& op) {
  auto entry = op_table().find(op.id);
  ASSERT_NE(entry, op_table().end()) << op.name << " has no reference cases";
  f32_stands_for() = low;
  struct Restore {
    ~Restore() { f32_stands_for() = DType::f32; }
  } restore;
  CaseList cases = entry->second();
  int ran = 0;
  bool has_f32 = false;  // f32 cases not opted out of the low-precision runs
  for (const OpCase& c : cases) {
    for (const Ref& r : c.inputs) has_f32 = has_f32 || (c.low_precision_variant && r.dtype == DType::f32);
    has_f32 = has_f32 || (c.low_precision_variant && c.expected.dtype == DType::f32);
    if (!runs_in_low_precision(op, c)) continue;
    ++ran;
    for (bool strided : {false, true}) {
      if (strided && !c.strided_variant) continue;
      for (Device dev : {cpu, device()}) run_case(op, c, strided, dev);
    }
  }
  if (has_f32 && op.kind != OpKind::collective && op.kind != OpKind::creation)
    EXPECT_GT(ran, 0) << op.name << " has f32 cases but none in " << name(low);
}

TEST_P(OpReference, MatchesPlainLoopReferenceInBf16) { matches_plain_loop_reference_in(DType::bf16, *GetParam()); }
TEST_P(OpReference, MatchesPlainLoopReferenceInF16) { matches_plain_loop_reference_in(DType::f16, *GetParam()); }

std::string op_name(const ::testing::TestParamInfo<const OpDesc*>& info) { return std::string(info.param->name); }

INSTANTIATE_TEST_SUITE_P(AllOps, OpReference, ::testing::ValuesIn(registered_ops), op_name);

TEST(OpTable, EveryRegisteredOpHasReferenceCases) {
  for (const OpDesc* op : registered_ops) EXPECT_TRUE(op_table().contains(op->id)) << op->name << " has no entry";
}

TEST(OpTable, IdsAreUniqueAndFindable) {
  for (const OpDesc* op : registered_ops) EXPECT_EQ(find_op(op->id), op) << op->name;
}

}  // namespace
}  // namespace lt::test
