// DeviceLoader: batches arrive on the lazy device equal to the loader's cpu batches, moved
// ahead of the loop, with one barrier (MarkStep) per batch placed as the loop advances.
#include <gtest/gtest.h>

#include <chrono>
#include <numeric>
#include <thread>
#include <vector>

#include "data_helpers.hpp"

namespace lt::data {
namespace {

using namespace std::chrono_literals;
using testing::within;

TensorDataset<2> numbered(std::int64_t n) {
  std::vector<float> x(static_cast<std::size_t>(n * 4));
  std::iota(x.begin(), x.end(), 0.0f);
  std::vector<std::int64_t> y(static_cast<std::size_t>(n));
  std::iota(y.begin(), y.end(), std::int64_t{0});
  return TensorDataset(from_vector(x, {n, 4}), from_vector(y, {n}));
}

static_assert(BatchSource<DataLoader<TensorDataset<2>>>);
static_assert(BatchSource<SampleGenerator<std::array<Tensor, 2>>>);
static_assert(BatchSource<std::vector<std::pair<Tensor, Tensor>>>);
static_assert(std::ranges::input_range<DeviceLoader<DataLoader<TensorDataset<2>>&>>);
static_assert(std::ranges::input_range<DeviceLoader<DataLoader<TensorDataset<2>>>>);

TEST(DeviceLoader, OwnsAnRvalueLoaderAndReadsPlainContainers) {
  int batches = 0;
  for (auto [x, y] : DeviceLoader(DataLoader(numbered(9), {.batch_size = 4}), device())) {
    EXPECT_TRUE(x.device().is_lazy());
    ++batches;
  }
  EXPECT_EQ(batches, 3);
  std::vector<std::pair<Tensor, Tensor>> prepared = {{ones({2}), zeros({2}, cpu, i64)}, {full({2}, 3.0), ones({2}, cpu, i64)}};
  std::vector<float> firsts;
  for (auto [x, y] : DeviceLoader(prepared, device())) firsts.push_back(x.to_vector<float>()[0]);
  EXPECT_EQ(firsts, (std::vector<float>{1, 3}));
}

TEST(DeviceLoader, YieldsLazyBatchesEqualToTheCpuBatchesWithOneStepEach) {
  const Device dev = device();
  DataLoader loader(numbered(22), {.batch_size = 5, .shuffle = true, .seed = 9});
  DataLoader twin(numbered(22), {.batch_size = 5, .shuffle = true, .seed = 9});
  std::vector<std::array<Tensor, 2>> cpu_batches;
  for (const auto& batch : twin) cpu_batches.push_back(batch);
  ASSERT_EQ(cpu_batches.size(), 5u);

  wait_device_ops();
  const std::int64_t steps_before = metrics::counter("MarkStep");
  const std::int64_t moved_before = metrics::counter("TransferToDevice");
  std::vector<Tensor> sums;
  std::size_t k = 0;
  for (auto [x, y] : DeviceLoader(loader, dev)) {
    ASSERT_LT(k, cpu_batches.size());
    EXPECT_EQ(metrics::counter("MarkStep") - steps_before, static_cast<std::int64_t>(k))
        << "the barrier of each step comes as the loop advances";
    EXPECT_EQ(x.device(), dev);
    EXPECT_EQ(y.device(), dev);
    EXPECT_EQ(x.shape(), cpu_batches[k][0].shape());
    EXPECT_EQ(x.to_vector<float>(), cpu_batches[k][0].to_vector<float>());
    EXPECT_EQ(y.to_vector<std::int64_t>(), cpu_batches[k][1].to_vector<std::int64_t>());
    sums.push_back((x * 2.0f).sum());  // a step's work, left pending for the barrier
    ++k;
  }
  EXPECT_EQ(k, cpu_batches.size());
  EXPECT_EQ(metrics::counter("MarkStep") - steps_before, static_cast<std::int64_t>(cpu_batches.size()));
  EXPECT_EQ(metrics::counter("TransferToDevice") - moved_before, static_cast<std::int64_t>(2 * cpu_batches.size()));
  for (std::size_t i = 0; i < sums.size(); ++i) {
    auto values = cpu_batches[i][0].to_vector<float>();
    EXPECT_FLOAT_EQ(sums[i].item<float>(), 2.0f * std::accumulate(values.begin(), values.end(), 0.0f));
  }
}

TEST(DeviceLoader, MovesBatchesAheadOfTheLoop) {
  DataLoader loader(numbered(40), {.batch_size = 4});
  DeviceLoader on_device(loader, device(), {.prefetch = 2});
  const std::int64_t before = metrics::counter("TransferToDevice");
  auto it = on_device.begin();
  // While the consumer holds batch 0, the worker moves batches 1 and 2 (two tensors each).
  auto deadline = std::chrono::steady_clock::now() + 10s;
  while (metrics::counter("TransferToDevice") - before < 6 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(1ms);
  EXPECT_GE(metrics::counter("TransferToDevice") - before, 6);
  // The worker may make one batch more, which then waits for room in the queue.
  std::this_thread::sleep_for(20ms);
  EXPECT_LE(metrics::counter("TransferToDevice") - before, 8) << "no further than the look-ahead";
}

TEST(DeviceLoader, ServesASampleGeneratorItOwns) {
  wait_device_ops();
  const std::int64_t steps_before = metrics::counter("MarkStep");
  auto fake = fake_data({4, 1, 3, 3}, 10, 6, 1);
  const auto pixels = fake.sample()[0].to_vector<float>();
  DeviceLoader on_device(std::move(fake), device());  // an rvalue source is moved in
  EXPECT_EQ(on_device.size(), 6);
  int seen = 0;
  for (auto [x, y] : on_device) {
    EXPECT_TRUE(x.device().is_lazy());
    EXPECT_EQ(x.to_vector<float>(), pixels);
    ++seen;
  }
  EXPECT_EQ(seen, 6);
  EXPECT_EQ(metrics::counter("MarkStep") - steps_before, 6);
}

TEST(DeviceLoader, BreakingOutEndsCleanly) {
  DataLoader loader(numbered(1000), {.batch_size = 2});
  wait_device_ops();
  const std::int64_t steps_before = metrics::counter("MarkStep");
  within(20s, [&] {
    int taken = 0;
    for (auto [x, y] : DeviceLoader(loader, device())) {
      Tensor pending = x + 1.0f;
      if (++taken == 3) break;
    }
  });
  EXPECT_EQ(metrics::counter("MarkStep") - steps_before, 2) << "no barrier for the step left unfinished";
  // The same loader serves a full pass next.
  int batches = 0;
  for (auto [x, y] : DeviceLoader(loader, device())) ++batches;
  EXPECT_EQ(batches, 500);
}

TEST(DeviceLoader, SourceErrorsReachTheLoop) {
  struct Broken {
    std::int64_t size() const { return 6; }
    Tensor get(std::int64_t i) const {
      LT_CHECK(i != 4, "broken: example ", i);
      return full({2}, static_cast<double>(i));
    }
  };
  DataLoader loader(Broken{}, {.batch_size = 2});
  int seen = 0;
  within(20s, [&] {
    try {
      for (const Tensor& x : DeviceLoader(loader, device())) {
        EXPECT_TRUE(x.device().is_lazy());
        ++seen;
      }
      ADD_FAILURE() << "no error";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("broken: example 4"), std::string::npos) << e.what();
    }
  });
  EXPECT_EQ(seen, 2);
}

TEST(DeviceLoader, NeedsALazyDevice) {
  DataLoader loader(numbered(4), {.batch_size = 2});
  EXPECT_THROW(DeviceLoader(loader, cpu), Error);
  EXPECT_THROW(DeviceLoader(loader, device(), {.prefetch = 0}), Error);
}

}  // namespace
}  // namespace lt::data
