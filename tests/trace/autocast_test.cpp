// Autocast: which ops a traced step runs in which dtype (read from the IR), nesting and
// disabling, per-thread state, gradients of f32 leaves, plan-cache keys and bad input.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <lazytensor/lazytensor.hpp>
#include <lazytensor/nn.hpp>
#include <lazytensor/runtime/barrier.hpp>  // the plan cache, cleared here

namespace lt {
namespace {

namespace F = nn::functional;

/// For each op of the graph computing `tensors`, the dtypes its nodes have: "%3 = conv2d(%1,
/// %2) {1, 1} bf16[2, 4, 6, 6]  # file:line" gives conv2d -> bf16; a fragment's ops are
/// listed under "fragment".
std::map<std::string, std::set<std::string>> op_dtypes(const std::vector<Tensor>& tensors) {
  std::map<std::string, std::set<std::string>> found;
  std::istringstream lines(debug::ir_text(tensors));
  for (std::string line; std::getline(lines, line);) {
    const std::size_t eq = line.find(" = ");
    if (eq == std::string::npos) continue;
    line = line.substr(0, line.find("  #"));
    const std::size_t open = line.find_first_of("({", eq + 3), shape = line.rfind('[');
    if (open == std::string::npos || shape == std::string::npos) continue;
    const std::size_t space = line.rfind(' ', shape);
    found[line.substr(eq + 3, open - eq - 3)].insert(line.substr(space + 1, shape - space - 1));
  }
  return found;
}

std::set<std::string> only(const char* dtype) { return {dtype}; }

class Autocast : public ::testing::Test {
 protected:
  void SetUp() override {
    wait_device_ops();
    manual_seed(7);
  }
};

TEST_F(Autocast, ProductsRecordInBf16AndTheFp32ListInF32) {
  const Device dev = device();
  Tensor x = randn({4, 8}, dev), w = randn({5, 8}, dev), b = randn({5}, dev), other = randn({4, 5}, dev);
  Tensor img = randn({2, 3, 6, 6}, dev), k = randn({4, 3, 3, 3}, dev);
  Tensor product, fc, summed, soft, logsoft, expd, normed, relud, mixed, conv, loss;
  {
    autocast guard(bf16);
    EXPECT_TRUE(autocast_enabled());
    EXPECT_EQ(autocast_dtype(), bf16);
    product = matmul(x, w.t());
    fc = F::linear(x, w, b);
    summed = sum(product);
    soft = softmax(product, 1);
    logsoft = log_softmax(product, 1);
    expd = exp(product);
    normed = layer_norm(product, Shape{5});
    relud = relu(product);
    mixed = product + other;  // bf16 and f32: the wider, as PyTorch promotes
    conv = conv2d(img, k, std::nullopt, 1, 1);
    loss = F::cross_entropy(fc, from_vector<std::int64_t>({0, 1, 2, 3}, dev));
  }
  EXPECT_FALSE(autocast_enabled());
  EXPECT_EQ(product.dtype(), bf16);
  EXPECT_EQ(fc.dtype(), bf16) << "linear's bias joins its product in bf16";
  EXPECT_EQ(relud.dtype(), bf16) << "ops of neither list keep their operands' dtype";
  EXPECT_EQ(conv.dtype(), bf16);
  for (const Tensor& t : {summed, soft, logsoft, expd, normed, mixed, loss}) EXPECT_EQ(t.dtype(), f32);

  auto ops = op_dtypes({product, fc, conv});
  EXPECT_EQ(ops["matmul"], only("bf16"));
  EXPECT_EQ(ops["conv2d"], only("bf16"));
  EXPECT_TRUE(ops["cast"].count("bf16")) << "the f32 operands cast to bf16";
  ops = op_dtypes({summed, soft, logsoft, expd, normed, loss});
  const std::string ir = debug::ir_text({summed, soft, logsoft, expd, normed, loss});
  for (const char* wide : {"sum", "mean", "var"}) EXPECT_EQ(ops[wide], only("f32")) << wide << "\n" << ir;
  EXPECT_EQ(ops["exp"], only("f32")) << ir;
  // log and rsqrt fuse into expressions (fragments): none of them in bf16.
  EXPECT_EQ(ops["fragment"].count("bf16"), 0u) << ir;
  EXPECT_TRUE(ops["fragment"].count("f32")) << ir;
  EXPECT_EQ(ops["matmul"], only("bf16"));

  // The values: a product of the bf16-rounded operands, rounded once.
  const std::vector<float> got = product.to_vector<float>();
  const std::vector<float> want = matmul(x.to(bf16).to(f32), w.t().to(bf16).to(f32)).to_vector<float>();
  for (std::size_t e = 0; e < got.size(); ++e) EXPECT_NEAR(got[e], want[e], std::abs(want[e]) / 128 + 1e-4) << e;
}

TEST_F(Autocast, WithoutAGuardNothingChanges) {
  const Device dev = device();
  Tensor x = randn({3, 4}, dev), w = randn({4, 2}, dev);
  Tensor y = matmul(x, w);
  EXPECT_EQ(y.dtype(), f32);
  auto ops = op_dtypes({y});
  EXPECT_EQ(ops.count("cast"), 0u);
  EXPECT_EQ(ops["matmul"], only("f32"));
}

TEST_F(Autocast, GuardsNestAndDisable) {
  const Device dev = device();
  Tensor x = randn({3, 4}, dev), w = randn({4, 2}, dev);
  autocast outer(bf16);
  EXPECT_EQ(matmul(x, w).dtype(), bf16);
  {
    autocast off(f32);
    EXPECT_FALSE(autocast_enabled());
    EXPECT_EQ(matmul(x, w).dtype(), f32);
    {
      autocast on_again(bf16);
      EXPECT_EQ(matmul(x, w).dtype(), bf16);
    }
    EXPECT_EQ(matmul(x, w).dtype(), f32);
  }
  {
    autocast disabled(bf16, /*enabled=*/false);  // as torch.autocast(enabled=False)
    EXPECT_FALSE(autocast_enabled());
    EXPECT_EQ(matmul(x, w).dtype(), f32);
  }
  EXPECT_TRUE(autocast_enabled());
  EXPECT_EQ(matmul(x, w).dtype(), bf16);
}

TEST_F(Autocast, OtherThreadsAreUnaffected) {
  autocast guard(bf16);
  DType there = bf16;
  bool enabled_there = true;
  std::thread other([&] {
    enabled_there = autocast_enabled();
    Tensor x = randn({3, 4}, cpu), w = randn({4, 2}, cpu);
    there = matmul(x, w).dtype();
  });
  other.join();
  EXPECT_FALSE(enabled_there);
  EXPECT_EQ(there, f32);
  Tensor x = randn({3, 4}, cpu), w = randn({4, 2}, cpu);
  EXPECT_EQ(matmul(x, w).dtype(), bf16) << "eager ops are autocast too";
}

/// One step of an MLP: the loss and the gradients of its f32 parameters.
struct MlpStep {
  Tensor loss;
  std::vector<Tensor> grads;
  std::string backward_ir;
};

MlpStep mlp_step(bool under_autocast) {
  const Device dev = device();
  manual_seed(11);
  Tensor x = randn({16, 32}, dev), target = randint(0, 10, {16}, dev);
  Tensor w1 = Tensor(randn({64, 32}, dev) * 0.2).requires_grad_(), b1 = Tensor(randn({64}, dev) * 0.1).requires_grad_();
  Tensor w2 = Tensor(randn({10, 64}, dev) * 0.2).requires_grad_(), b2 = Tensor(randn({10}, dev) * 0.1).requires_grad_();
  MlpStep s;
  {
    autocast guard(bf16, under_autocast);
    s.loss = F::cross_entropy(F::linear(relu(F::linear(x, w1, b1)), w2, b2), target);
    s.loss.backward();  // inside the guard: backward turns autocast off itself
  }
  for (Tensor* p : {&w1, &b1, &w2, &b2}) s.grads.push_back(p->grad());
  s.backward_ir = debug::ir_text({w1.grad()});
  return s;
}

TEST_F(Autocast, GradientsOfF32LeavesAreF32AndCloseToTheF32Run) {
  const MlpStep wide = mlp_step(false), lowered = mlp_step(true);
  EXPECT_EQ(lowered.loss.dtype(), f32);
  EXPECT_NE(lowered.backward_ir.find("matmul"), std::string::npos);
  for (std::size_t p = 0; p < wide.grads.size(); ++p) {
    ASSERT_EQ(lowered.grads[p].dtype(), f32) << "parameter " << p;
    ASSERT_EQ(lowered.grads[p].shape(), wide.grads[p].shape());
  }
  // The backward products of the autocast step run in bf16 too.
  auto ops = op_dtypes({lowered.grads[0], lowered.grads[2]});
  EXPECT_EQ(ops["matmul"], only("bf16"));
  EXPECT_NEAR(lowered.loss.item<float>(), wide.loss.item<float>(), 0.02 * std::abs(wide.loss.item<float>()) + 1e-3);
  for (std::size_t p = 0; p < wide.grads.size(); ++p) {
    const std::vector<float> a = lowered.grads[p].to_vector<float>(), b = wide.grads[p].to_vector<float>();
    float scale = 0;
    for (float v : b) scale = std::max(scale, std::abs(v));
    // bf16 keeps 8 significant bits: a few roundings along the chain, relative to the largest.
    for (std::size_t e = 0; e < a.size(); ++e) ASSERT_NEAR(a[e], b[e], 0.03f * scale + 1e-6f) << "parameter " << p << " at " << e;
  }
}

TEST_F(Autocast, AStepUnderAutocastHasAPlanOfItsOwn) {
  const Device dev = device();
  plan_cache().clear();
  metrics::reset();
  Tensor x = randn({8, 16}, dev), w = randn({16, 4}, dev);
  sync();
  wait_device_ops();
  const std::int64_t compiled = metrics::counter("UncachedCompile"), hits = metrics::counter("CachedCompile");
  auto step = [&](bool lowered) {
    // Casts made afresh: a kept cast would change the graph once more (autocast_cache_test.cpp).
    autocast guard(bf16, lowered, /*cache_enabled=*/false);
    Tensor y = sum(relu(matmul(x, w)));
    sync();
    wait_device_ops();
    return y.item<float>();
  };
  step(false);
  EXPECT_EQ(metrics::counter("UncachedCompile"), compiled + 1);
  step(true);
  EXPECT_EQ(metrics::counter("UncachedCompile"), compiled + 2) << "the autocast step must not take the f32 plan";
  step(false);
  step(true);
  EXPECT_EQ(metrics::counter("UncachedCompile"), compiled + 2);
  EXPECT_EQ(metrics::counter("CachedCompile"), hits + 2) << "each step takes its own plan again";
}

TEST_F(Autocast, AttentionRunsItsProductsInBf16) {
  const Device dev = device();
  Tensor q = randn({2, 5, 8}, dev), k = randn({2, 6, 8}, dev), v = randn({2, 6, 8}, dev);
  Tensor want = F::scaled_dot_product_attention(q, k, v);
  Tensor got;
  {
    autocast guard(bf16);
    got = F::scaled_dot_product_attention(q, k, v);
  }
  EXPECT_EQ(got.dtype(), bf16);
  auto ops = op_dtypes({got});
  EXPECT_EQ(ops.count("attention"), 0u) << "the fused op takes f32 only: its composite runs";
  EXPECT_EQ(ops["matmul"], only("bf16"));
  EXPECT_EQ(ops["sum"], only("f32")) << "softmax in f32\n" << debug::ir_text({got});
  const std::vector<float> a = got.to_vector<float>(), b = want.to_vector<float>();
  for (std::size_t e = 0; e < a.size(); ++e) EXPECT_NEAR(a[e], b[e], 0.05) << e;
}

TEST_F(Autocast, IntegerAndF64OperandsAreLeftAlone) {
  const Device dev = device();
  Tensor a = randint(0, 5, {3, 4}, dev, i32), b = randint(0, 5, {4, 2}, dev, i32);
  Tensor d = randn({3, 4}, dev, f64), e = randn({4, 2}, dev, f64);
  autocast guard(bf16);
  EXPECT_EQ(matmul(a, b).dtype(), i32);
  EXPECT_EQ(matmul(d, e).dtype(), f64);
  EXPECT_EQ(sum(d).dtype(), f64);
}

TEST_F(Autocast, BadDtypesAreErrors) {
  for (DType t : {i32, i64, f64, boolean}) {
    try {
      autocast guard(t);
      ADD_FAILURE() << "autocast(" << name(t) << ") made no error";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("autocast"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(name(t)), std::string::npos) << e.what();
    }
    EXPECT_FALSE(autocast_enabled()) << "a failed guard changes nothing";
  }
}

}  // namespace
}  // namespace lt
