// Datasets and the DataLoader: batches against plain loops, shuffling by seed, drop_last, the
// worker thread's bounded look-ahead, early exits and destruction without hangs, and errors
// from the worker raised on the consumer's thread.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <numeric>
#include <stdexcept>
#include <thread>
#include <vector>

#include "data_helpers.hpp"

namespace lt::data {
namespace {

using namespace std::chrono_literals;
using testing::within;

/// n examples: x = [3 * i, 3 * i + 1, 3 * i + 2] (f32 [3]), y = i (i64 []).
TensorDataset<2> numbered(std::int64_t n) {
  std::vector<float> x(static_cast<std::size_t>(n * 3));
  std::iota(x.begin(), x.end(), 0.0f);
  std::vector<std::int64_t> y(static_cast<std::size_t>(n));
  std::iota(y.begin(), y.end(), std::int64_t{0});
  return TensorDataset(from_vector(x, {n, 3}), from_vector(y, {n}));
}

/// The labels of each batch of one epoch.
template <class Loader>
std::vector<std::vector<std::int64_t>> epoch_labels(Loader& loader) {
  std::vector<std::vector<std::int64_t>> out;
  for (auto [x, y] : loader) out.push_back(y.template to_vector<std::int64_t>());
  return out;
}

/// A dataset whose reads can be counted, slowed down and made to fail.
struct ProbeDataset {
  std::int64_t n = 100;
  std::int64_t fail_at = -1;
  bool std_error = false;
  std::chrono::microseconds delay{0};
  std::shared_ptr<std::atomic<std::int64_t>> reads = std::make_shared<std::atomic<std::int64_t>>(0);
  std::shared_ptr<std::atomic<bool>> read_off_main = std::make_shared<std::atomic<bool>>(false);
  std::thread::id main = std::this_thread::get_id();

  std::int64_t size() const { return n; }
  std::array<Tensor, 2> get(std::int64_t i) const {
    if (std::this_thread::get_id() != main) *read_off_main = true;
    ++*reads;
    if (delay.count() > 0) std::this_thread::sleep_for(delay);
    if (i == fail_at) {
      if (std_error) throw std::runtime_error("probe: disk on fire");
      fail("probe: example ", i, " is unreadable");
    }
    return {full({2}, static_cast<double>(i)), full({}, i, cpu, i64)};
  }
};
static_assert(Dataset<ProbeDataset>);
static_assert(Dataset<TensorDataset<2>>);
static_assert(std::ranges::input_range<DataLoader<TensorDataset<2>>&>);

TEST(TensorDataset, RowsAreViewsOfTheTensors) {
  TensorDataset<2> d = numbered(5);
  EXPECT_EQ(d.size(), 5);
  auto [x, y] = d.get(3);
  EXPECT_EQ(x.shape(), (Shape{3}));
  EXPECT_EQ(x.to_vector<float>(), (std::vector<float>{9, 10, 11}));
  EXPECT_EQ(y.dim(), 0);
  EXPECT_EQ(y.item<std::int64_t>(), 3);
  EXPECT_EQ(x.impl().data.buffer.data(), d.tensors()[0].impl().data.buffer.data()) << "a row shares memory";
}

TEST(TensorDataset, RowsOfAStridedTensor) {
  // A transposed tensor: its rows are strided in memory.
  Tensor t = from_vector(std::vector<float>{0, 1, 2, 3, 4, 5}, {2, 3}).t();  // [3, 2]
  TensorDataset d(t);
  EXPECT_EQ(d.get(2)[0].to_vector<float>(), (std::vector<float>{2, 5}));
  DataLoader loader(d, {.batch_size = 3});
  for (auto [batch] : loader) EXPECT_EQ(batch.to_vector<float>(), (std::vector<float>{0, 3, 1, 4, 2, 5}));
}

TEST(TensorDataset, RejectsBadTensors) {
  EXPECT_THROW(TensorDataset(zeros({3, 2}), zeros({4})), Error);
  EXPECT_THROW(TensorDataset(zeros({})), Error);
  EXPECT_THROW(TensorDataset<1>(Tensor{}), Error);
  EXPECT_THROW(TensorDataset(zeros({2}, device())), Error);
  TensorDataset<2> d = numbered(4);
  EXPECT_THROW(d.get(4), Error);
  EXPECT_THROW(d.get(-1), Error);
}

TEST(DataLoader, BatchesMatchAPlainLoop) {
  const std::int64_t n = 10, b = 4;
  TensorDataset<2> d = numbered(n);
  DataLoader loader(d, {.batch_size = b});
  EXPECT_EQ(loader.size(), 3);
  std::int64_t start = 0, batches = 0;
  for (auto [x, y] : loader) {
    const std::int64_t len = std::min(b, n - start);
    ASSERT_EQ(x.shape(), (Shape{len, 3}));
    ASSERT_EQ(y.shape(), (Shape{len}));
    EXPECT_EQ(x.dtype(), f32);
    EXPECT_EQ(y.dtype(), i64);
    EXPECT_EQ(x.device(), cpu);
    std::vector<float> want_x;
    std::vector<std::int64_t> want_y;
    for (std::int64_t i = start; i < start + len; ++i) {
      for (int k = 0; k < 3; ++k) want_x.push_back(static_cast<float>(3 * i + k));
      want_y.push_back(i);
    }
    EXPECT_EQ(x.to_vector<float>(), want_x);
    EXPECT_EQ(y.to_vector<std::int64_t>(), want_y);
    start += len;
    ++batches;
  }
  EXPECT_EQ(start, n);
  EXPECT_EQ(batches, loader.size());
}

TEST(DataLoader, DropLastLeavesOutTheShortBatch) {
  DataLoader keep(numbered(10), {.batch_size = 4});
  DataLoader drop(numbered(10), {.batch_size = 4, .drop_last = true});
  EXPECT_EQ(keep.size(), 3);
  EXPECT_EQ(drop.size(), 2);
  auto kept = epoch_labels(keep), dropped = epoch_labels(drop);
  ASSERT_EQ(dropped.size(), 2u);
  EXPECT_EQ(dropped[0], (std::vector<std::int64_t>{0, 1, 2, 3}));
  EXPECT_EQ(dropped[1], (std::vector<std::int64_t>{4, 5, 6, 7}));
  EXPECT_EQ(kept.back(), (std::vector<std::int64_t>{8, 9}));
  // Exact multiples lose nothing; fewer examples than a batch give no batch at all.
  EXPECT_EQ(DataLoader(numbered(8), {.batch_size = 4, .drop_last = true}).size(), 2);
  DataLoader tiny(numbered(3), {.batch_size = 4, .drop_last = true});
  EXPECT_EQ(tiny.size(), 0);
  EXPECT_TRUE(epoch_labels(tiny).empty());
}

TEST(DataLoader, EmptyDatasetGivesNoBatches) {
  DataLoader loader(numbered(0), {.batch_size = 2});
  EXPECT_EQ(loader.size(), 0);
  EXPECT_TRUE(loader.begin() == loader.end());
}

TEST(DataLoader, ShuffledEpochIsAPermutationInTheSeedsOrder) {
  const std::int64_t n = 50;
  DataLoader loader(numbered(n), {.batch_size = 8, .shuffle = true, .seed = 7});
  for (std::uint64_t epoch = 0; epoch < 3; ++epoch) {
    std::vector<std::int64_t> seen;
    for (auto [x, y] : loader) {
      auto labels = y.to_vector<std::int64_t>();
      auto values = x.to_vector<float>();
      for (std::size_t k = 0; k < labels.size(); ++k)  // rows stay whole: x and y move together
        EXPECT_EQ(values[3 * k], static_cast<float>(3 * labels[k]));
      seen.insert(seen.end(), labels.begin(), labels.end());
    }
    EXPECT_EQ(seen, epoch_order(n, true, 7, epoch)) << "epoch " << epoch;
    std::vector<std::int64_t> sorted = seen;
    std::sort(sorted.begin(), sorted.end());
    std::vector<std::int64_t> all(static_cast<std::size_t>(n));
    std::iota(all.begin(), all.end(), std::int64_t{0});
    EXPECT_EQ(sorted, all);
    EXPECT_NE(seen, all) << "shuffled";
  }
}

TEST(DataLoader, ShuffleIsDeterministicBySeedAndFreshPerEpoch) {
  auto run = [](std::uint64_t seed, int epochs) {
    DataLoader loader(numbered(40), {.batch_size = 5, .shuffle = true, .seed = seed});
    std::vector<std::vector<std::vector<std::int64_t>>> out;
    for (int e = 0; e < epochs; ++e) {
      manual_seed(1000 + static_cast<std::uint64_t>(e));  // the global generator plays no part
      (void)randn({4});
      out.push_back(epoch_labels(loader));
    }
    return out;
  };
  auto a = run(3, 3), b = run(3, 3), c = run(4, 1);
  EXPECT_EQ(a, b);
  EXPECT_NE(a[0], a[1]);
  EXPECT_NE(a[1], a[2]);
  EXPECT_NE(a[0], c[0]);

  DataLoader loader(numbered(40), {.batch_size = 5, .shuffle = true, .seed = 3});
  EXPECT_EQ(loader.epoch(), 0u);
  (void)epoch_labels(loader);
  (void)epoch_labels(loader);
  EXPECT_EQ(loader.epoch(), 2u);
  loader.set_epoch(1);
  EXPECT_EQ(epoch_labels(loader), a[1]) << "set_epoch replays an epoch";
}

TEST(EpochOrder, EveryPermutationIsEquallyLikely) {
  // 4 items have 24 orders; 24000 epochs should give each about 1000 times.
  std::map<std::vector<std::int64_t>, int> counts;
  for (std::uint64_t e = 0; e < 24000; ++e) ++counts[epoch_order(4, true, 11, e)];
  ASSERT_EQ(counts.size(), 24u);
  for (const auto& [order, count] : counts) {
    EXPECT_GT(count, 850);
    EXPECT_LT(count, 1150);
  }
  EXPECT_EQ(epoch_order(5, false, 11, 3), (std::vector<std::int64_t>{0, 1, 2, 3, 4}));
}

TEST(DataLoader, WorkerStaysABoundedWayAhead) {
  ProbeDataset probe;
  DataLoader loader(probe, {.batch_size = 1, .prefetch = 3});
  auto it = loader.begin();
  // One batch taken, at most 3 queued and one made that waits for room.
  std::this_thread::sleep_for(100ms);
  EXPECT_LE(probe.reads->load(), 5);
  EXPECT_GE(probe.reads->load(), 1);
  EXPECT_TRUE(probe.read_off_main->load()) << "examples are read on the worker thread";
  ++it;
  std::this_thread::sleep_for(50ms);
  EXPECT_LE(probe.reads->load(), 6);
}

TEST(DataLoader, BreakingOutStopsTheWorker) {
  ProbeDataset probe{.n = 10000, .delay = 100us};
  DataLoader loader(probe, {.batch_size = 10});
  within(20s, [&] {
    int taken = 0;
    for (auto [x, y] : loader) {
      if (++taken == 3) break;
    }
  });
  const std::int64_t after = probe.reads->load();
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(probe.reads->load(), after) << "no reads once the loop has left";
  EXPECT_LT(after, 10000);
  // The loader starts the next epoch as usual.
  EXPECT_EQ(loader.begin()->at(1).to_vector<std::int64_t>(), (std::vector<std::int64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}));
}

TEST(DataLoader, AnExceptionInTheLoopStopsTheWorker) {
  ProbeDataset probe{.n = 10000, .delay = 100us};
  DataLoader loader(probe, {.batch_size = 10});
  within(20s, [&] {
    EXPECT_THROW(
        {
          for (auto [x, y] : loader)
            if (y.to_vector<std::int64_t>().front() == 20) throw std::logic_error("the step failed");
        },
        std::logic_error);
  });
  const std::int64_t after = probe.reads->load();
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(probe.reads->load(), after);
}

TEST(DataLoader, DestroyedMidEpochWithoutHanging) {
  ProbeDataset probe{.n = 10000, .delay = 100us};
  within(20s, [&] {
    auto loader = std::make_unique<DataLoader<ProbeDataset>>(probe, DataLoaderOptions{.batch_size = 10, .prefetch = 4});
    auto it = loader->begin();
    ++it;
    loader.reset();  // the iterator keeps the dataset: it still works
    EXPECT_EQ(it->at(1).to_vector<std::int64_t>().front(), 10);
    ++it;
    EXPECT_EQ(it->at(1).to_vector<std::int64_t>().front(), 20);
  });  // the iterator goes here, in the middle of the epoch
  const std::int64_t after = probe.reads->load();
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(probe.reads->load(), after);
  // Many iterators at once, dropped in any order.
  within(20s, [&] {
    DataLoader loader(probe, {.batch_size = 7});
    auto a = loader.begin();
    auto b = loader.begin();
    ++b;
    auto c = std::move(a);
  });
}

TEST(DataLoader, WorkerErrorsReachTheConsumerInPlace) {
  ProbeDataset probe{.n = 20, .fail_at = 7};
  DataLoader loader(probe, {.batch_size = 2});
  std::vector<std::int64_t> seen;
  within(20s, [&] {
    try {
      for (auto [x, y] : loader) {
        auto labels = y.to_vector<std::int64_t>();
        seen.insert(seen.end(), labels.begin(), labels.end());
      }
      ADD_FAILURE() << "no error";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("probe: example 7 is unreadable"), std::string::npos) << e.what();
    }
  });
  EXPECT_EQ(seen, (std::vector<std::int64_t>{0, 1, 2, 3, 4, 5})) << "the batches before the bad one arrive";
  // Errors other than lt::Error pass through unchanged; the loader stays usable.
  ProbeDataset other{.n = 4, .fail_at = 0, .std_error = true};
  DataLoader failing(other, {.batch_size = 2});
  EXPECT_THROW(failing.begin(), std::runtime_error);
  EXPECT_THROW(epoch_labels(loader), Error) << "a new epoch meets the bad example again";
}

TEST(DataLoader, MismatchedExamplesRaise) {
  struct Ragged {
    std::int64_t size() const { return 4; }
    Tensor get(std::int64_t i) const { return zeros({i < 2 ? 2 : 3}); }
  };
  DataLoader loader(Ragged{}, {.batch_size = 4});
  try {
    loader.begin();
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("collate: field 0 of example 2 is f32[3]"), std::string::npos) << e.what();
  }
  DataLoader pairs(Ragged{}, {.batch_size = 2});
  auto it = pairs.begin();
  EXPECT_EQ(it->shape(), (Shape{2, 2})) << "single-tensor examples batch too";
}

TEST(DataLoader, ExamplesOfAnyTupleShape) {
  struct Pairs {
    std::int64_t size() const { return 3; }
    std::pair<Tensor, Tensor> get(std::int64_t i) const { return {full({2}, static_cast<double>(i)), full({}, i, cpu, i64)}; }
  };
  struct Triples {
    std::int64_t size() const { return 3; }
    std::tuple<Tensor, Tensor, Tensor> get(std::int64_t i) const {
      return {full({}, static_cast<double>(i)), full({1, 2}, static_cast<double>(-i)), full({}, i % 2 == 0)};
    }
  };
  DataLoader pairs(Pairs{}, {.batch_size = 3});
  for (auto [x, y] : pairs) {
    EXPECT_EQ(x.to_vector<float>(), (std::vector<float>{0, 0, 1, 1, 2, 2}));
    EXPECT_EQ(y.to_vector<std::int64_t>(), (std::vector<std::int64_t>{0, 1, 2}));
  }
  DataLoader triples(Triples{}, {.batch_size = 2});
  auto it = triples.begin();
  auto [a, b, c] = *it;
  EXPECT_EQ(a.shape(), (Shape{2}));
  EXPECT_EQ(b.shape(), (Shape{2, 1, 2}));
  EXPECT_EQ(b.to_vector<float>(), (std::vector<float>{0, 0, -1, -1}));
  EXPECT_EQ(c.dtype(), boolean);
  EXPECT_EQ(c.to_vector<bool>(), (std::vector<bool>{true, false}));
  ++it;
  EXPECT_EQ(std::get<1>(*it).shape(), (Shape{1, 1, 2})) << "the short last batch";
}

TEST(DataLoader, RejectsBadOptions) {
  EXPECT_THROW(DataLoader(numbered(3), {.batch_size = 0}), Error);
  EXPECT_THROW(DataLoader(numbered(3), {.prefetch = 0}), Error);
}

TEST(MapDataset, TransformsEachExample) {
  MapDataset doubled(numbered(6), [](std::array<Tensor, 2> e) {
    return std::array<Tensor, 2>{Tensor(e[0] * 2.0f), e[1]};
  });
  DataLoader loader(doubled, {.batch_size = 3});
  auto it = loader.begin();
  EXPECT_EQ((*it)[0].to_vector<float>(), (std::vector<float>{0, 2, 4, 6, 8, 10, 12, 14, 16}));
  EXPECT_EQ((*it)[1].to_vector<std::int64_t>(), (std::vector<std::int64_t>{0, 1, 2}));
}

TEST(SampleGenerator, ServesOneSeededBatchCountTimes) {
  auto fake = fake_data({8, 1, 4, 4}, 10, 5, 42);
  EXPECT_EQ(fake.size(), 5);
  int served = 0;
  for (auto [x, y] : fake) {
    EXPECT_EQ(x.shape(), (Shape{8, 1, 4, 4}));
    EXPECT_EQ(y.shape(), (Shape{8}));
    EXPECT_EQ(y.dtype(), i64);
    EXPECT_EQ(x.to_vector<float>(), fake.sample()[0].to_vector<float>());
    ++served;
  }
  EXPECT_EQ(served, 5);
  auto values = fake.sample()[0].to_vector<float>();
  EXPECT_TRUE(std::all_of(values.begin(), values.end(), [](float v) { return v >= 0 && v < 1; }));
  auto labels = fake.sample()[1].to_vector<std::int64_t>();
  EXPECT_TRUE(std::all_of(labels.begin(), labels.end(), [](std::int64_t v) { return v >= 0 && v < 10; }));
  manual_seed(5);
  EXPECT_EQ(fake_data({8, 1, 4, 4}, 10, 1, 42).sample()[0].to_vector<float>(), values) << "the seed alone decides";
  EXPECT_NE(fake_data({8, 1, 4, 4}, 10, 1, 43).sample()[0].to_vector<float>(), values);
  EXPECT_THROW(fake_data({8}, 0, 1), Error);
  EXPECT_THROW(SampleGenerator(zeros({2}), -1), Error);
}

}  // namespace
}  // namespace lt::data
