// Resuming a training run from a checkpoint gives bitwise the losses and weights of the run
// that never stopped: model, optimizer (SGD with momentum, Adam), schedule, the random
// generator (dropout) and the loader's position (a shuffled epoch entered in the middle).
#include <bit>
#include <functional>
#include <memory>

#include <lazytensor/data.hpp>

#include "io_test_support.hpp"

namespace lt::io::testing {
namespace {

struct SmallNet : nn::Module {
  nn::Linear fc1{6, 16}, fc2{16, 3};
  nn::BatchNorm1d bn{16};
  nn::Dropout drop{0.25};
  SmallNet() { LT_REGISTER_MODULES(fc1, bn, drop, fc2); }
  Tensor forward(const Tensor& x) { return log_softmax(fc2(drop(relu(bn(fc1(x))))), 1); }
};

auto make_dataset() {
  manual_seed(11);
  Tensor x = randn({40, 6});
  Tensor y = randint(0, 3, {40}, cpu, i64);
  return data::TensorDataset(x, y);
}

/// One run's record: each step's loss as bits, and the weights at the end.
struct Record {
  std::vector<std::uint32_t> losses;
  std::vector<Bytes> weights;
};

using MakeOptimizer = std::function<std::unique_ptr<optim::Optimizer>(SmallNet&)>;
using MakeSchedule = std::function<std::unique_ptr<optim::LRScheduler>(optim::Optimizer&)>;

/// Trains for `steps` batches of a shuffled loader (5 batches per epoch) on the lazy device,
/// stepping the schedule at each epoch's end. With `stop_at`, saves a checkpoint after that
/// many steps, throws everything away, builds a fresh run (other initial weights, another
/// generator state) and resumes it from the file.
Record train(const MakeOptimizer& make_opt, const MakeSchedule& make_schedule, int steps, int stop_at,
             const std::string& path) {
  const Device dev = device();
  auto dataset = make_dataset();
  Record record;
  manual_seed(1);
  auto model = std::make_unique<SmallNet>();
  model->to(dev);
  auto opt = make_opt(*model);
  auto schedule = make_schedule(*opt);
  data::DataLoader loader(dataset, {.batch_size = 8, .shuffle = true, .seed = 5});
  data::LoaderPosition position;
  int step = 0;
  while (step < steps) {
    loader.set_position(position);
    for (auto [x, y] : loader) {
      opt->zero_grad();
      Tensor loss = nn::functional::nll_loss(model->forward(x.to(dev)), y.to(dev));
      loss.backward();
      opt->step();
      sync(dev);
      record.losses.push_back(std::bit_cast<std::uint32_t>(loss.item<float>()));
      ++step;
      ++position.batch;
      if (step == stop_at) {
        Checkpoint{.model = model.get(), .optimizer = opt.get(), .scheduler = schedule.get(), .loader = &position}
            .save(path, {{"step", std::to_string(step)}});
        // A fresh run: other weights, a generator moved on, no optimizer state.
        manual_seed(999);
        (void)randn({100});
        model = std::make_unique<SmallNet>();
        model->to(dev);
        opt = make_opt(*model);
        schedule = make_schedule(*opt);
        position = {};
        Metadata user = Checkpoint{.model = model.get(), .optimizer = opt.get(), .scheduler = schedule.get(),
                                   .loader = &position}
                            .load(path);
        EXPECT_EQ(user, (Metadata{{"step", std::to_string(stop_at)}}));
        break;  // re-enter the epoch at the saved position
      }
      if (step == steps) break;
    }
    if (position.batch == loader.size()) {
      position = {position.epoch + 1, 0};
      schedule->step();
    }
  }
  for (auto& [name, t] : model->state_dict()) record.weights.push_back(raw_bytes(t));
  return record;
}

void expect_bitwise_resume(const MakeOptimizer& make_opt, const MakeSchedule& make_schedule, int stop_at) {
  ScratchDir dir;
  Record straight = train(make_opt, make_schedule, 13, -1, "");
  Record resumed = train(make_opt, make_schedule, 13, stop_at, dir / "run.safetensors");
  ASSERT_EQ(straight.losses.size(), 13u);
  EXPECT_EQ(resumed.losses, straight.losses);
  EXPECT_EQ(resumed.weights, straight.weights);
}

TEST(Resume, SgdWithMomentumAndStepLrMidEpoch) {
  expect_bitwise_resume(
      [](SmallNet& m) { return std::make_unique<optim::SGD>(m.parameters(), optim::SGDOptions{.lr = 0.05, .momentum = 0.9}); },
      [](optim::Optimizer& o) { return std::make_unique<optim::StepLR>(o, 1, 0.5); }, 7);
}

TEST(Resume, SgdAtAnEpochBoundary) {
  expect_bitwise_resume(
      [](SmallNet& m) {
        return std::make_unique<optim::SGD>(m.parameters(),
                                            optim::SGDOptions{.lr = 0.05, .momentum = 0.9, .nesterov = true});
      },
      [](optim::Optimizer& o) { return std::make_unique<optim::StepLR>(o, 1, 0.5); }, 5);
}

TEST(Resume, AdamWithCosineAnnealing) {
  expect_bitwise_resume(
      [](SmallNet& m) { return std::make_unique<optim::Adam>(m.parameters(), optim::AdamOptions{.lr = 0.01}); },
      [](optim::Optimizer& o) { return std::make_unique<optim::CosineAnnealingLR>(o, 4); }, 8);
}

TEST(Resume, AdamW) {
  expect_bitwise_resume(
      [](SmallNet& m) { return std::make_unique<optim::AdamW>(m.parameters()); },
      [](optim::Optimizer& o) { return std::make_unique<optim::StepLR>(o, 2, 0.1); }, 3);
}

}  // namespace
}  // namespace lt::io::testing
