// Every elementwise op of the op table has its public faces, and each face records that op:
// the free function, the method on tensors and on expressions, and the FixedTensor form. The
// faces are made from the table; these checks are made from it too, and every elementwise op
// of the registry must be among them, so an op added outside the table fails here.
#include <set>

#include <gtest/gtest.h>

#include <lazytensor/lazytensor.hpp>

namespace lt {
namespace {

/// The op of the one node `t` records: a single op on tensors is its own node.
OpId recorded_op(const Tensor& t) { return t.impl().node->op->id; }

/// The op an expression applies last.
template <class E> const OpDesc* outer_op(const E&) { return &E::op; }

class PublicFaces : public ::testing::Test {
 protected:
  Device dev = device();
  Tensor a = rand({2, 3}, dev) + 0.5;
  Tensor b = rand({2, 3}, dev) + 0.5;
  FixedTensor<2, 3> fa{a};
  FixedTensor<2, 3> fb{b};
  std::set<OpId> checked;

  void expect_records(OpId id, const Tensor& t, const char* face) {
    EXPECT_EQ(recorded_op(t), id) << face;
    checked.insert(id);
  }
};

TEST_F(PublicFaces, EveryTableOpHasItsFacesAndEachRecordsIt) {
#define LT_CHECK_UNARY_plain(op)                                            \
  expect_records(OpId::op, lt::op(a), "lt::" #op "(tensor)");               \
  expect_records(OpId::op, a.op(), "tensor." #op "()");                     \
  expect_records(OpId::op, Tensor(lt::op(fa)), #op "(FixedTensor)");        \
  EXPECT_EQ(outer_op((a + b).op()), &unary::op) << "expression." #op "()";
#define LT_CHECK_UNARY_custom(op) checked.insert(OpId::op);  // faces checked below
#define LT_CHECK_UNARY(op, number, Fn, Rule, face, ...) LT_CHECK_UNARY_##face(op)
  LT_UNARY_TABLE(LT_CHECK_UNARY)
#undef LT_CHECK_UNARY
#undef LT_CHECK_UNARY_plain
#undef LT_CHECK_UNARY_custom
#define LT_CHECK_BINARY(op, ...)                                            \
  expect_records(OpId::op, lt::op(a, b), "lt::" #op "(tensor, tensor)");    \
  expect_records(OpId::op, a.op(b), "tensor." #op "(tensor)");              \
  expect_records(OpId::op, Tensor(lt::op(fa, fb)), #op "(FixedTensor, FixedTensor)");
  LT_BINARY_TABLE(LT_CHECK_BINARY)
#undef LT_CHECK_BINARY

  // The ops that take attributes, whose faces are written by hand.
  expect_records(OpId::gelu, lt::gelu(a, "tanh"), "lt::gelu");
  expect_records(OpId::gelu, a.gelu(), "tensor.gelu()");
  expect_records(OpId::gelu, Tensor(lt::gelu(fa)), "gelu(FixedTensor)");
  expect_records(OpId::softplus, lt::softplus(a, 2.0), "lt::softplus");
  expect_records(OpId::softplus, a.softplus(), "tensor.softplus()");
  expect_records(OpId::clamp, lt::clamp(a, 0.6, 0.9), "lt::clamp");
  expect_records(OpId::clamp, a.clamp(0.6), "tensor.clamp()");
  expect_records(OpId::where, lt::where(Tensor(a > b), a, b), "lt::where");
  expect_records(OpId::check_finite, lt::check_finite(a), "lt::check_finite");

  // Every elementwise op of the registry came from the table (the cast aside, a leaf op).
  for (const OpDesc* op : registered_ops)
    if (op->kind == OpKind::elementwise && op->id != OpId::cast)
      EXPECT_TRUE(checked.contains(op->id)) << op->name << " has no public faces from the op table";
}

TEST_F(PublicFaces, ExpressionFacesFuseIntoOneNode) {
  Tensor t = (a * b).exp().maximum(b).sigmoid();
  EXPECT_EQ(recorded_op(t), OpId::fragment);
}

}  // namespace
}  // namespace lt
