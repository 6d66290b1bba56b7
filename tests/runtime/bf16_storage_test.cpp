// bf16 storage (LT_USE_BF16, set_bf16_storage): f32 tensors on lazy devices hold bf16 while the
// program sees f32. Values equal the f32 computation with each op's result rounded to bf16
// (the same ops run eagerly, each followed by a round trip through bf16), reading back is
// exact, the device holds half the bytes, saving writes f32, and training runs close to f32.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <unistd.h>
#include <vector>

#include <lazytensor/io.hpp>
#include <lazytensor/lazytensor.hpp>
#include <lazytensor/nn.hpp>
#include <lazytensor/optim.hpp>

namespace lt {
namespace {

/// Storage on for one test; off again after it, once its tensors are gone (declare it first).
struct StorageOn {
  StorageOn() { set_bf16_storage(true); }
  ~StorageOn() {
    wait_device_ops();
    set_bf16_storage(false);
  }
  StorageOn(const StorageOn&) = delete;
  StorageOn& operator=(const StorageOn&) = delete;
};

/// An eager value rounded to bf16 and widened again: one op's result under storage.
Tensor rounded(const Tensor& t) { return t.to(bf16).to(f32); }

void expect_same_floats(const Tensor& got, const Tensor& want, const std::string& what) {
  ASSERT_EQ(got.dtype(), f32) << what;
  std::vector<float> g = got.to_vector<float>(), w = want.to_vector<float>();
  ASSERT_EQ(g.size(), w.size()) << what;
  for (std::size_t i = 0; i < g.size(); ++i)
    ASSERT_EQ(std::bit_cast<std::uint32_t>(g[i]), std::bit_cast<std::uint32_t>(w[i])) << what << ", element " << i;
}

/// The device's value of `t`, after a barrier: its stored dtype and bytes.
const Array& device_value(const Tensor& t) {
  wait_device_ops();
  EXPECT_TRUE(t.impl().node->is_data());
  return t.impl().node->leaf().data;
}

TEST(Bf16Storage, TensorsSeeF32AndOpsRoundOncePerResult) {
  StorageOn on;
  manual_seed(3);
  Tensor xc = randn({48, 33}), bc = randn({33});  // eager: unaffected
  Tensor x = xc.to(device()), b = bc.to(device());
  EXPECT_EQ(x.dtype(), f32);
  expect_same_floats(x, rounded(xc), "moved to the device");
  const Tensor xr = rounded(xc), br = rounded(bc);
  const std::int64_t rows_before = metrics::counter("RowLoopGroups"), views_before = metrics::counter("TileViewGroups");
  // Expressions, composites and reductions: each op's result rounded once.
  Tensor y = exp(x * 0.75f) - b;
  Tensor s = softmax(x + b, 1);
  Tensor m = mean(x, Dims{1}, true) + x.t().t();
  Tensor p = matmul(x, x.t());
  sync();
  expect_same_floats(y, rounded(rounded(exp(rounded(xr * 0.75f))) - br), "exp(x * 0.75) - b");
  // Composites against the same ops on eager bf16 tensors, whose every op rounds once.
  Tensor xb = xc.to(bf16), bb = bc.to(bf16);
  expect_same_floats(s, softmax(xb + bb, 1).to(f32), "softmax");
  expect_same_floats(m, (mean(xb, Dims{1}, true) + xb).to(f32), "mean + x");
  expect_same_floats(p, matmul(xb, xb.t()).to(f32), "matmul");
  EXPECT_GE(metrics::counter("RowLoopGroups") - rows_before, 1);
  EXPECT_EQ(metrics::counter("TileViewGroups"), views_before) << "a stored group ran on the tile path";
  // Eager tensors compute in f32 as ever: some result is not a bf16 value.
  std::vector<float> eager = (xc * 0.75f).eval().to_vector<float>();
  bool unrounded = false;
  for (float v : eager) unrounded = unrounded || (std::bit_cast<std::uint32_t>(v) & 0xffffu) != 0;
  EXPECT_TRUE(unrounded);
}

TEST(Bf16Storage, DeviceHoldsHalfTheBytesAndReadingBackIsExact) {
  StorageOn on;
  Tensor x = rand({1000, 3}, device());
  Tensor y = x * 3.0f + 1.0f;
  sync();
  for (const Tensor* t : {&x, &y}) {
    const Array& stored = device_value(*t);
    EXPECT_EQ(stored.view.dtype, bf16);
    EXPECT_EQ(stored.view.numel() * static_cast<std::int64_t>(itemsize(stored.view.dtype)), 3000 * 2);
    Tensor c = t->cpu();
    EXPECT_EQ(c.dtype(), f32);
    EXPECT_EQ(c.impl().data.view.dtype, f32);
    std::vector<float> f = t->to_vector<float>();
    std::vector<double> d = t->to_vector<double>();
    for (std::size_t i = 0; i < f.size(); ++i) {
      ASSERT_EQ(std::bit_cast<std::uint32_t>(f[i]) & 0xffffu, 0u) << i;  // a bf16 value, widened
      ASSERT_EQ(static_cast<double>(f[i]), d[i]) << i;
    }
  }
  // Views keep the storage; explicit conversions give what they name.
  EXPECT_TRUE(detail::stored_as_bf16(x.t().impl()));
  EXPECT_TRUE(detail::stored_as_bf16(x.reshape({3, 1000}).impl()));
  Tensor as_bf16 = x.to(bf16), as_f64 = x.to(f64), as_f32 = x.to(f32);
  EXPECT_EQ(as_bf16.dtype(), bf16);
  EXPECT_EQ(as_f64.dtype(), f64);
  EXPECT_EQ(as_f32.dtype(), f32);
  expect_same_floats(as_bf16.to(f32).cpu(), x.cpu(), "to(bf16)");
  expect_same_floats(as_f64.cpu().to(f32), x.cpu(), "to(f64)");
  expect_same_floats(as_f32, x.cpu(), "to(f32)");
  EXPECT_EQ(x.sum().item<float>(), rounded(sum(x.cpu())).item<float>());
}

TEST(Bf16Storage, SavingWritesF32AndLoadingStoresAgain) {
  StorageOn on;
  Tensor w = randn({7, 5}, device()) * 0.3f;
  const std::string path = "/tmp/lt_bf16_storage_" + std::to_string(::getpid()) + ".safetensors";
  save({{"w", w}}, path);
  TensorMap eager = load(path);
  ASSERT_EQ(eager.at("w").dtype(), f32);
  expect_same_floats(eager.at("w"), w.cpu(), "saved and loaded on cpu");
  TensorMap lazy = load(path, device());
  expect_same_floats(lazy.at("w"), w.cpu(), "saved and loaded on the device");
  EXPECT_EQ(device_value(lazy.at("w")).view.dtype, bf16);
  std::remove(path.c_str());
}

TEST(Bf16Storage, BadOperandsStillRaise) {
  StorageOn on;
  Tensor x = randn({4, 3}, device()), y = randn({5}, device());
  try {
    Tensor z = x + y;
    FAIL() << "no error";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("add"), std::string::npos) << what;
    EXPECT_NE(what.find("f32[4, 3]"), std::string::npos) << what;
  }
  EXPECT_THROW(matmul(x, y), Error);
  EXPECT_THROW(x.cpu() + x, Error);
  EXPECT_THROW(x.reshape({5, 3}), Error);
  EXPECT_EQ(x.dtype(), f32);  // nothing recorded, the operands as they were
}

/// Linear + MSE + SGD, a few steps under storage and in f32 from the same start: the losses
/// agree within bf16's precision, the stored model's values stay bf16 values and the loss falls.
TEST(Bf16Storage, TrainingStepStaysCloseToF32) {
  auto train = [](bool stored, std::vector<float>& losses) {
    manual_seed(11);
    nn::Linear fc(16, 4);
    Tensor xc = randn({64, 16}), targetc = matmul(xc, randn({16, 4})) * 0.5f;
    if (stored) set_bf16_storage(true);
    fc.to(device());
    Tensor x = xc.to(device()), target = targetc.to(device());
    optim::SGD opt(fc.parameters(), {.lr = 0.05});
    for (int step = 0; step < 5; ++step) {
      opt.zero_grad();
      Tensor loss = nn::functional::mse_loss(fc(x), target);
      loss.backward();
      opt.step();
      sync();
      EXPECT_EQ(loss.dtype(), f32);
      losses.push_back(loss.item<float>());
    }
    std::vector<float> w = fc.weight.to_vector<float>();
    EXPECT_EQ(fc.weight.dtype(), f32);
    EXPECT_EQ(fc.weight.grad().dtype(), f32);
    if (stored)
      for (float v : w) EXPECT_EQ(std::bit_cast<std::uint32_t>(v) & 0xffffu, 0u);
    wait_device_ops();
    return w;
  };
  std::vector<float> f32_losses, bf16_losses;
  std::vector<float> f32_weight = train(false, f32_losses);
  std::vector<float> bf16_weight;
  {
    StorageOn on;
    bf16_weight = train(true, bf16_losses);
  }
  ASSERT_EQ(f32_losses.size(), bf16_losses.size());
  for (std::size_t k = 0; k < f32_losses.size(); ++k)
    EXPECT_NEAR(bf16_losses[k], f32_losses[k], 0.03 * std::abs(f32_losses[k])) << "step " << k;
  EXPECT_LT(bf16_losses.back(), bf16_losses.front());
  for (std::size_t i = 0; i < f32_weight.size(); ++i) EXPECT_NEAR(bf16_weight[i], f32_weight[i], 0.02) << i;
}

}  // namespace
}  // namespace lt
