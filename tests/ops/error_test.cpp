// Error paths of the elementwise ops and of dispatch: every message names the op and its
// operands, a failed call records nothing, and the next op and the next barrier still work.
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <lazytensor/lazytensor.hpp>

namespace lt {
namespace {

/// The message of the lt::Error that `call` raises (a test failure when it raises none).
std::string error_of(const std::function<void()>& call) {
  try {
    call();
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "no lt::Error was raised";
  return {};
}

void expect_mentions(const std::string& message, std::initializer_list<std::string_view> parts) {
  for (std::string_view p : parts) EXPECT_NE(message.find(p), std::string::npos) << "'" << p << "' missing from: " << message;
}

const std::vector<float> data = {1, -2, 3, -4, 5, -6};

class ElementwiseErrors : public ::testing::TestWithParam<Device> {
 protected:
  void SetUp() override {
    Device dev = GetParam();
    // On the lazy device these are pending values: a failed call must leave their graph alone.
    f = from_vector(data, {2, 3}, dev) * 2;
    v4 = from_vector<float>({1, 2, 3, 4}, dev) + 0;
    b = from_vector<float>({1, 0, 2}, dev) > 0;
    i = from_vector<std::int32_t>({1, 2, 3, 4, 5, 6}, {2, 3}, dev) * 1;
    h = (f * 0.5).to(bf16);
  }

  std::vector<Tensor> live() const { return {f, v4, b, i, h}; }

  /// `call` fails naming `parts`; the pending graph is as it was; the next op and barrier work.
  void expect_error(const std::function<void()>& call, std::initializer_list<std::string_view> parts) {
    std::string before = debug::ir_text(live());
    expect_mentions(error_of(call), parts);
    EXPECT_EQ(debug::ir_text(live()), before) << "the failed call changed the pending graph";
    Tensor next = f + 1;
    if (GetParam().is_lazy()) sync();
    std::vector<float> got = next.to_vector<float>();
    ASSERT_EQ(got.size(), data.size());
    for (std::size_t k = 0; k < data.size(); ++k) EXPECT_EQ(got[k], data[k] * 2 + 1);
    SetUp();  // pending operands again for the next check
  }

  Tensor f, v4, b, i, h;
};

TEST_P(ElementwiseErrors, ShapesThatDoNotBroadcast) {
  expect_error([&] { (void)(f + v4); }, {"add", "f32[2, 3]", "f32[4]", "broadcast"});
  expect_error([&] { (void)(maximum(v4, f)); }, {"maximum", "f32[4]", "f32[2, 3]"});
  expect_error([&] { (void)(where(f > 0, f, v4)); }, {"where", "bool[2, 3]", "f32[2, 3]", "f32[4]"});
}

TEST_P(ElementwiseErrors, SubtractionWithBool) {
  expect_error([&] { (void)(b - b); }, {"sub", "bool[3]"});
  // A bool operand is rejected even where the other one would promote it, as in PyTorch.
  expect_error([&] { (void)(b - 1); }, {"sub", "bool[3]"});
  expect_error([&] { (void)(1.5 - b); }, {"sub", "bool[3]"});
  expect_error([&] { (void)(i - true); }, {"sub", "i32[2, 3]", "bool[]"});
}

TEST_P(ElementwiseErrors, NegationAndFriendsOfBool) {
  expect_error([&] { (void)(-b); }, {"neg", "bool[3]"});
  expect_error([&] { (void)(b.relu()); }, {"relu", "bool[3]"});
  expect_error([&] { (void)(b.floor()); }, {"floor", "bool[3]"});
  expect_error([&] { (void)(fmod(b, b)); }, {"fmod", "bool[3]"});
}

TEST_P(ElementwiseErrors, WhereNeedsABoolCondition) {
  expect_error([&] { (void)(where(f, f, f)); }, {"where", "condition", "f32[2, 3]"});
  expect_error([&] { (void)(where(i, f, 0.0)); }, {"where", "condition", "i32[2, 3]"});
}

// bf16 computes in f32 between casts; a bad call fails on the bf16 operands themselves,
// before any cast is recorded, and names them.
TEST_P(ElementwiseErrors, Bf16IsRejectedWhereF32Is) {
  expect_error([&] { (void)(h + v4); }, {"add", "bf16[2, 3]", "f32[4]", "broadcast"});
  expect_error([&] { (void)(where(h, f, 1.0)); }, {"where", "condition", "bf16[2, 3]"});
  expect_error([&] { (void)(f.gather(1, h)); }, {"gather", "index", "bf16"});
  expect_error([&] { (void)(matmul(h, v4)); }, {"matmul", "bf16[2, 3]", "f32[4]"});
  expect_error([&] { (void)(conv2d(h, h)); }, {"conv2d", "bf16[2, 3]"});
  expect_error([&] { (void)(sum(h, 2)); }, {"sum", "bf16[2, 3]"});
}

TEST_P(ElementwiseErrors, Bf16ComputesInF32AndRoundsOnce) {
  // bf16 with an f32 tensor gives f32; with an f32 scalar or zero-dim tensor, bf16.
  EXPECT_EQ((h + f).dtype(), f32);
  EXPECT_EQ((h * 0.1).dtype(), bf16);
  EXPECT_EQ((h + full({}, 0.5, GetParam())).dtype(), bf16);
  EXPECT_EQ((h > 0).dtype(), boolean);
  EXPECT_EQ((h + i).dtype(), bf16);
  // 1 + 2^-8 is halfway between two bf16 values: rounded once, to even.
  Tensor one = full({3}, 1.0, GetParam(), bf16);
  std::vector<double> got = (one + std::ldexp(1.0, -8)).to(f64).to_vector<double>();
  EXPECT_EQ(got, std::vector<double>(3, 1.0));
  got = (one + 3 * std::ldexp(1.0, -8)).to(f64).to_vector<double>();
  EXPECT_EQ(got, std::vector<double>(3, 1.0 + std::ldexp(1.0, -6)));
}

TEST_P(ElementwiseErrors, UndefinedOperand) {
  Tensor undefined;
  expect_error([&] { (void)(f + undefined); }, {"add", "undefined", "f32[2, 3]"});
  expect_error([&] { (void)(undefined * 2.0); }, {"mul", "undefined"});
  expect_error([&] { (void)(exp(undefined)); }, {"exp", "undefined"});
  expect_error([&] { (void)(where(undefined, f, 0.0)); }, {"where", "undefined"});
}

TEST_P(ElementwiseErrors, BadAttributes) {
  expect_error([&] { (void)(gelu(f, "fast")); }, {"gelu", "fast", "f32[2, 3]"});
  expect_error([&] { (void)(clamp(f, std::nullopt, std::nullopt)); }, {"clamp", "f32[2, 3]"});
}

TEST_P(ElementwiseErrors, ReadingAndAssigning) {
  expect_error([&] { f.item<float>(); }, {"item", "f32[2, 3]"});
  expect_error([&] { f.assign(v4); }, {"assign", "f32[2, 3]", "f32[4]"});
  expect_error([&] { f.assign(i); }, {"assign", "f32[2, 3]", "i32[2, 3]"});
}

std::string device_name(const ::testing::TestParamInfo<Device>& info) { return info.param.is_lazy() ? "lazy" : "cpu"; }

INSTANTIATE_TEST_SUITE_P(Devices, ElementwiseErrors, ::testing::Values(cpu, device()), device_name);

TEST(DispatchErrors, DeviceMismatchNamesBothDevicesAndTheFix) {
  Tensor here = from_vector<float>({1, 2}), there = from_vector<float>({3, 4}, device());
  Tensor pending = there * 2;
  std::string before = debug::ir_text({pending});
  std::string m = error_of([&] { (void)(here + there); });
  expect_mentions(m, {"add", "cpu", "lazy:0", ".to(", "f32[2]"});
  expect_mentions(error_of([&] { (void)where(here > 0, there, here); }), {"where", "cpu", "lazy:0"});
  EXPECT_EQ(debug::ir_text({pending}), before);
  // The suggested fix works.
  Tensor sum = here.to(device()) + there;
  sync();
  EXPECT_EQ(sum.to_vector<float>(), (std::vector<float>{4, 6}));
  EXPECT_EQ(pending.to_vector<float>(), (std::vector<float>{6, 8}));
}

TEST(DispatchErrors, SyncOfTheEagerDevice) { expect_mentions(error_of([] { sync(cpu); }), {"sync", "cpu"}); }

TEST(KernelErrors, IntegerFmodByZeroOnTheEagerDeviceRaisesAtOnce) {
  Tensor a = from_vector<std::int32_t>({5, 7}), z = from_vector<std::int32_t>({2, 0});
  expect_mentions(error_of([&] { Tensor r = fmod(a, z); }), {"fmod", "division by zero"});
  expect_mentions(error_of([&] { Tensor r = fmod(a, 0); }), {"fmod", "division by zero"});
  EXPECT_EQ(fmod(a, 2).to_vector<std::int32_t>(), (std::vector<std::int32_t>{1, 1}));
}

TEST(KernelErrors, IntegerFmodByZeroOnTheLazyDeviceRaisesAtTheBarrier) {
  Tensor a = from_vector<std::int32_t>({5, 7}, device()), z = from_vector<std::int32_t>({2, 0}, device());
  Tensor good = a * 3;
  Tensor bad = fmod(a, z);  // recording checks shapes and dtypes only: values are not known yet
  // The step runs on the device's worker: its error is raised by the next barrier, read or
  // wait_device_ops() (by the barrier itself with LT_ASYNC=0).
  expect_mentions(error_of([] {
                    sync();
                    wait_device_ops();
                  }),
                  {"fmod", "division by zero"});
  // The failed value raises again when read; the rest of the step can still be read.
  expect_mentions(error_of([&] { bad.to_vector<std::int32_t>(); }), {"fmod", "division by zero"});
  EXPECT_EQ(good.to_vector<std::int32_t>(), (std::vector<std::int32_t>{15, 21}));
  // The next step runs normally.
  Tensor next = fmod(a, 4) + 1;
  sync();
  EXPECT_EQ(next.to_vector<std::int32_t>(), (std::vector<std::int32_t>{2, 4}));
  sync();
}

}  // namespace
}  // namespace lt
