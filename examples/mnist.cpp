// A convolutional network trained on Fashion-MNIST on the lazy device: modules from lt::nn, SGD
// with momentum from lt::optim, batches moved ahead of their step by a DeviceLoader. Each step
// traces forward, backward and update; the loader's barrier runs them as one cached plan.
//
//   mnist [--epochs N] [--dir DIR] [--fake-data] [--replicas R] [--save DIR] [--resume FILE]
//         [--precision f32|bf16]
//
// Reads Debian's dataset-fashion-mnist by default; --fake-data trains on one seeded random
// batch instead (no files needed; the accuracy then means nothing). --replicas R trains data
// parallel: R replicas (under mpirun -np P, P x R), each on its share of every global batch
// of 128, their gradients averaged by lt::optimizer_step; only the master prints. --save DIR
// writes a checkpoint after each epoch (DIR/epoch-N.safetensors: weights, momentum, the random
// generator, the loader's place), --resume FILE continues a run from one. --precision bf16
// runs the model under lt::autocast(bf16), in training and in testing: convolutions and
// products in bf16, batch norm, log_softmax and the loss in f32, the weights and their
// gradients f32.
#include <array>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>
#include <tuple>

#include <lazytensor/data.hpp>
#include <lazytensor/distributed.hpp>
#include <lazytensor/io.hpp>
#include <lazytensor/nn.hpp>
#include <lazytensor/optim.hpp>

#include "example_support.hpp"
#include "mnist_net.hpp"

namespace {

namespace F = lt::nn::functional;

constexpr std::int64_t batch_size = 128;


using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

/// One epoch of training; returns the seconds it took. Every 20 steps a step closure draws the
/// progress line with that step's loss once the step has run: no read waits inside the loop.
template <class Source>
double train_epoch(MnistNet& model, lt::optim::SGD& optimizer, Source& source, lt::Device dev, int epoch, long steps,
                   lt::DType precision) {
  const bool master = lt::is_master_ordinal();
  model.train();
  auto start = Clock::now();
  long step = 0;
  lt::Tensor last_loss;
  auto draw = [&](long done, float loss) {
    double rate = static_cast<double>(done) / seconds_since(start);
    int filled = steps > 0 ? static_cast<int>(30 * done / steps) : 30;
    std::fprintf(stderr, "\repoch %d [%-30s] %ld/%ld  %.1f steps/s  loss %.4f", epoch,
                 std::string(static_cast<std::size_t>(filled), '=').c_str(), done, steps, rate, static_cast<double>(loss));
  };
  for (auto [data, target] : lt::data::DeviceLoader(source, dev)) {
    optimizer.zero_grad();
    lt::Tensor loss;
    {
      lt::autocast guard(precision);  // per replica thread; backward takes the dtypes it chose
      loss = F::nll_loss(model.forward(data), target);
    }
    loss.backward();
    ++step;
    if (master && step % 20 == 0) lt::add_step_closure([&draw, loss, done = step] { draw(done, loss.item<float>()); }, dev);
    lt::optimizer_step(optimizer);  // the replicas' mean gradient; with one replica, step()
    last_loss = loss;
  }
  lt::wait_device_ops();  // the last closures have drawn
  double seconds = seconds_since(start);
  if (master && step > 0) draw(step, last_loss.item<float>());
  if (master) std::fprintf(stderr, "\n");
  return seconds;
}

/// The accuracy over every replica's share of the test set.
template <class Source>
double test_accuracy(MnistNet& model, Source& source, lt::Device dev, lt::DType precision) {
  model.eval();
  lt::no_grad guard;
  lt::autocast lowered(precision);
  auto [mine_correct, mine_seen] = classified(source, dev, [&](const lt::Tensor& x) { return model.forward(x); });
  using Counts = std::array<std::int64_t, 2>;
  auto [correct, seen] = lt::mesh_reduce("accuracy", Counts{mine_correct, mine_seen}, [](std::vector<Counts> all) {
    Counts total{0, 0};
    for (auto [c, s] : all) total = {total[0] + c, total[1] + s};
    return total;
  });
  return seen ? static_cast<double>(correct) / static_cast<double>(seen) : 0.0;
}

/// One replica's run: the model, its share of the data, the loop.
int run_replica(const ExampleOptions& options) {
  const auto& [epochs, fake, dir] = std::tie(options.epochs, options.fake, options.dir);
  const bool master = lt::is_master_ordinal();
  const int world = lt::world_size();
  lt::manual_seed(1);
  const lt::Device dev = lt::device();
  MnistNet model;
  model.to(dev);
  lt::broadcast_master_param(model);
  lt::optim::SGD optimizer(model.parameters(), {.lr = 0.01, .momentum = 0.5});
  if (batch_size % world != 0) {
    if (master) std::cerr << "the replicas (" << world << ") must divide the batch of " << batch_size << '\n';
    return 2;
  }
  const std::int64_t share = batch_size / world;  // of every global batch
  // The run as a checkpoint holds it: after epoch e the loader stands at {e, 0}.
  lt::data::LoaderPosition position;
  const lt::Checkpoint run{.model = &model, .optimizer = &optimizer, .loader = &position};
  auto save_epoch = [&](int e) {
    if (options.save_dir.empty()) return;
    position = {static_cast<std::uint64_t>(e), 0};
    run.save(options.save_dir + "/epoch-" + std::to_string(e) + ".safetensors", {}, {.master_only = true});
  };
  try {
    if (!options.resume.empty()) {
      run.load(options.resume);
      if (master) std::printf("resumed from %s after epoch %llu\n", options.resume.c_str(),
                              static_cast<unsigned long long>(position.epoch));
    }
    const int first = static_cast<int>(position.epoch) + 1;
    if (fake) {
      const long steps = 100;
      auto data = lt::data::fake_data({share, 1, 28, 28}, 10, steps, /*seed=*/1 + static_cast<std::uint64_t>(lt::ordinal()));
      for (int e = first; e <= epochs; ++e) {
        double s = train_epoch(model, optimizer, data, dev, e, steps, options.precision);
        if (master) std::printf("epoch %d: %.2f ms per step (fake data)\n", e, 1e3 * s / steps);
        save_epoch(e);
      }
    } else {
      // Normalised once at load with the training set's pixel mean and deviation.
      const lt::data::Normalize normalize{lt::data::FashionMnist::pixel_mean, lt::data::FashionMnist::pixel_std};
      lt::data::FashionMnist train(dir, {.transform = normalize});
      lt::data::FashionMnist test(dir, {.split = lt::data::Split::test, .transform = normalize});
      // drop_last keeps every step's shapes the same, so one plan serves the whole epoch.
      const auto train_size = static_cast<std::int64_t>(train.size()), test_size = static_cast<std::int64_t>(test.size());
      lt::data::DistributedSampler train_shard(train_size, {.shuffle = true, .seed = 1});
      lt::data::DistributedSampler test_shard(test_size, {.shuffle = false});
      lt::data::DataLoader train_loader(train, {.batch_size = share, .drop_last = true, .sampler = train_shard});
      lt::data::DataLoader test_loader(test, {.batch_size = 1000, .sampler = test_shard});
      const long steps = static_cast<long>(train_loader.size());
      train_loader.set_position(position);
      for (int e = first; e <= epochs; ++e) {
        double s = train_epoch(model, optimizer, train_loader, dev, e, steps, options.precision);
        double accuracy = test_accuracy(model, test_loader, dev, options.precision);
        if (master)
          std::printf("epoch %d (%s): test accuracy %.2f%%, %.2f ms per training step\n", e, std::string(lt::name(options.precision)).c_str(),
                      100 * accuracy, 1e3 * s / steps);
        save_epoch(e);
      }
    }
  } catch (const lt::Error& e) {
    std::cerr << e.what() << '\n';
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::optional<ExampleOptions> options = ExampleOptions::parse(argc, argv);
  if (!options) return 2;
  if (batch_size % options->replicas != 0) {
    std::cerr << "--replicas must divide the batch of " << batch_size << '\n';
    return 2;
  }
  std::atomic<int> status{0};
  lt::launch([&](int) {
    if (int s = run_replica(*options)) status = s;
  }, {.replicas = options->replicas});
  if (status == 0) std::cout << lt::metrics::report();
  return status;
}
