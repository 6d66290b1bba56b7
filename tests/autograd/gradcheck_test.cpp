// Drives the gradient table: every registered op with tensor inputs has a gradient rule or is
// marked not differentiable, and has cases; rules must match finite differences on the eager
// and the lazy device, with plain and strided inputs. Fragments (fused expressions), the
// composite functions and a small MLP are checked the same way.
#include "gradcheck.hpp"

namespace lt::test {
namespace {

bool takes_tensors(const OpDesc& op) { return op.arity != 0; }

class OpGradient : public ::testing::TestWithParam<const OpDesc*> {};

TEST_P(OpGradient, MatchesFiniteDifferences) {
  const OpDesc& op = *GetParam();
  if (!takes_tensors(op)) GTEST_SKIP() << op.name << " takes no tensor: nothing to differentiate";
  ASSERT_NE(op.grad, nullptr) << op.name << " has no gradient rule and is not marked not_differentiable";
  auto entry = grad_table().find(op.id);
  ASSERT_NE(entry, grad_table().end()) << op.name << " has no gradient cases";
  GradCaseList cases = entry->second();
  ASSERT_FALSE(cases.empty());
  const std::string counter = "lt::" + std::string(op.name);
  for (const GradCase& c : cases) {
    if (op.grad == &not_differentiable) {
      // Requesting grad through the op gives none: the result does not require grad.
      for (Device dev : {cpu, device()}) {
        std::vector<Tensor> in;
        for (const GradInput& i : c.inputs) {
          Tensor t = to_tensor(i.value).to(dev);
          in.push_back(i.differentiable ? t.requires_grad_() : t);
        }
        Tensor out = c.run(in);
        EXPECT_FALSE(out.requires_grad()) << c.label << " on " << dev.str();
        EXPECT_THROW(out.sum().backward(), Error) << c.label << " on " << dev.str();
      }
      continue;
    }
    // The op itself must take part: a case that reaches the gradient another way proves nothing.
    std::int64_t before = metrics::counter(counter);
    check_gradients(c);
    EXPECT_GT(metrics::counter(counter), before) << c.label << ": " << op.name << " did not run";
  }
}

std::string op_name(const ::testing::TestParamInfo<const OpDesc*>& info) { return std::string(info.param->name); }

INSTANTIATE_TEST_SUITE_P(AllOps, OpGradient, ::testing::ValuesIn(registered_ops), op_name);

TEST(GradTable, EveryOpWithTensorInputsHasARuleOrIsMarked) {
  for (const OpDesc* op : registered_ops)
    if (takes_tensors(*op)) EXPECT_NE(op->grad, nullptr) << op->name;
}

// ---- fragments: the rule walks the body ----

using Call = std::function<Tensor(const std::vector<Tensor>&)>;

/// Checks a fused expression's gradients; on the lazy device it must record one fragment node.
void check_fragment(std::string label, std::vector<GradInput> inputs, Call run) {
  GradCase c{std::move(label), std::move(inputs), std::move(run)};
  std::vector<Tensor> lazy_in;
  for (const GradInput& i : c.inputs) lazy_in.push_back(to_tensor(i.value).to(device()).requires_grad_());
  Tensor y = c.run(lazy_in);
  EXPECT_EQ(y.impl().node->op->id, OpId::fragment) << c.label << ": not one fragment node";
  sync();
  check_gradients(c);
}

TEST(FragmentGradient, ArithmeticWithBroadcastAndScalars) {
  check_fragment("relu(a * b + c) * 0.5 - exp(a) / (b * b + 1)", {var({2, 3}, 1), var({2, 3}, 2), var({3}, 3)},
                 [](const std::vector<Tensor>& in) {
                   const Tensor &a = in[0], &b = in[1], &c = in[2];
                   return Tensor(relu(a * b + c) * 0.5f - exp(a) / (b * b + 1));
                 });
}

TEST(FragmentGradient, OpsThatReadAttributes) {
  check_fragment("gelu(x, tanh) + softplus(x, 2, 1) * clamp(x, -0.5, 0.5)", {var({3, 4}, 4)},
                 [](const std::vector<Tensor>& in) {
                   const Tensor& x = in[0];
                   return Tensor(gelu(x, "tanh") + softplus(x, 2.0, 1.0) * clamp(x, -0.5, 0.5));
                 });
}

TEST(FragmentGradient, OperandUsedTwiceAndComparisonsInside) {
  check_fragment("x * x + where(x > y, x * y, y - x)", {var({2, 3}, 5), var({3}, 6)}, [](const std::vector<Tensor>& in) {
    const Tensor &x = in[0], &y = in[1];
    return Tensor(x * x + where(x > y, x * y, y - x));
  });
}

TEST(FragmentGradient, PowMaximumSigmoidTanh) {
  check_fragment("maximum(a, b).pow(2) + sigmoid(a) * tanh(b) - log(b * b + 1)", {var({4}, 7), var({2, 4}, 8)},
                 [](const std::vector<Tensor>& in) {
                   const Tensor &a = in[0], &b = in[1];
                   return Tensor(maximum(a, b).pow(2.0) + sigmoid(a) * tanh(b) - log(b * b + 1.0));
                 });
}

// ---- composite functions: gradients through their primitives ----

TEST(CompositeGradient, SoftmaxAndLogSoftmax) {
  check_gradients({"softmax dim 1", {var({3, 4}, 1)}, [](const std::vector<Tensor>& in) { return softmax(in[0], 1); }});
  check_gradients({"log_softmax dim 0", {var({3, 4}, 2)}, [](const std::vector<Tensor>& in) { return log_softmax(in[0], 0); }});
}

TEST(CompositeGradient, LayerNormWithAffine) {
  check_gradients({"layer_norm over [3, 4]",
                   {var({2, 3, 4}, 1), var({3, 4}, 2), var({3, 4}, 3)},
                   [](const std::vector<Tensor>& in) { return layer_norm(in[0], Shape{3, 4}, in[1], in[2]); }});
}

TEST(CompositeGradient, BatchNormTraining) {
  check_gradients({"batch_norm [4, 3, 2, 2]",
                   {var({4, 3, 2, 2}, 1), var({3}, 2), var({3}, 3)},
                   [](const std::vector<Tensor>& in) {
                     Tensor mean = zeros({3}, in[0].device(), DType::f64), var = ones({3}, in[0].device(), DType::f64);
                     Tensor y = batch_norm(in[0], mean, var, in[1], in[2], true);
                     EXPECT_FALSE(mean.requires_grad()) << "running statistics take no history";
                     return y;
                   }});
}

TEST(CompositeGradient, LinearAndDropout) {
  check_gradients({"linear with bias", {var({2, 3, 4}, 1), var({5, 4}, 2), var({5}, 3)},
                   [](const std::vector<Tensor>& in) { return linear(in[0], in[1], in[2]); }});
  check_gradients({"dropout, the same mask each call", {var({4, 5}, 4)}, [](const std::vector<Tensor>& in) {
                     manual_seed(7);
                     return dropout(in[0], 0.4);
                   }});
}

// ---- a small MLP: every parameter's gradient ----

TEST(MlpGradient, TwoLayersWithLogSoftmaxLoss) {
  GradCase mlp{"mlp 5-8-3, batch 4",
               {fixed(random_ref({4, 5}, DType::f64, 1)), var({8, 5}, 2, -1, 1), var({8}, 3, -1, 1),
                var({3, 8}, 4, -1, 1), var({3}, 5, -1, 1), fixed(values_ref({4, 1}, DType::i64, {0, 2, 1, 2}))},
               [](const std::vector<Tensor>& in) {
                 Tensor h = tanh(linear(in[0], in[1], in[2]));
                 Tensor logp = log_softmax(linear(h, in[3], in[4]), 1);
                 return -logp.gather(1, in[5]).mean();  // negative log-likelihood
               }};
  check_gradients(mlp);
}

}  // namespace
}  // namespace lt::test
