// The data pipeline end to end: softmax regression on Fashion-MNIST, its gradient written out
// by hand. A DataLoader shuffles and batches on a worker thread; a DeviceLoader moves the
// batches to the lazy device ahead of their step and places one barrier per batch, so the
// training loop has no sync() of its own.
//
//   fashion_mnist_loader [--epochs N] [--dir DIR] [--fake-data]
//
// Reads Debian's dataset-fashion-mnist by default; --fake-data trains on one seeded random
// batch instead (no files needed; the accuracy then means nothing).
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <tuple>
#include <string>

#include <lazytensor/data.hpp>
#include <lazytensor/lazytensor.hpp>

#include "example_support.hpp"

namespace {

constexpr std::int64_t batch = 64, pixels = 28 * 28, classes = 10;

struct Model {
  lt::Tensor w, b;

  lt::Tensor logits(const lt::Tensor& x) const { return lt::Tensor(x.flatten(1).mm(w)) + b; }

  /// One step of gradient descent on the cross-entropy; returns the batch's mean loss.
  lt::Tensor train_step(const lt::Tensor& x, const lt::Tensor& y, float lr) {
    lt::Tensor flat = x.flatten(1);
    lt::Tensor z = logits(x);
    lt::Tensor target = lt::one_hot(y, classes).to(lt::f32);
    lt::Tensor loss = -(lt::log_softmax(z, 1) * target).sum() / static_cast<float>(x.size(0));
    lt::Tensor grad = (lt::softmax(z, 1) - target) / static_cast<float>(x.size(0));  // d loss / d z
    w -= flat.t().mm(grad) * lr;
    b -= grad.sum({0}) * lr;
    return loss;
  }
};

template <class Source>
double run_epoch(Model& model, Source&& source, lt::Device dev, float lr) {
  double loss = 0;
  std::int64_t steps = 0;
  lt::Tensor total = lt::zeros({}, dev);
  for (auto [x, y] : lt::data::DeviceLoader(source, dev)) {
    total = lt::Tensor(total + model.train_step(x, y, lr));
    ++steps;
  }
  loss = total.item<float>();
  return steps ? loss / static_cast<double>(steps) : 0.0;
}

template <class Source>
double accuracy(const Model& model, Source& source, lt::Device dev) {
  return classification_accuracy(source, dev, [&](const lt::Tensor& x) { return model.logits(x); });
}

}  // namespace

int main(int argc, char** argv) {
  const std::optional<ExampleOptions> options = ExampleOptions::parse(argc, argv);
  if (!options) return 2;
  const auto& [epochs, fake, dir] = std::tie(options->epochs, options->fake, options->dir);
  const lt::Device dev = lt::device();
  Model model{lt::zeros({pixels, classes}, dev), lt::zeros({classes}, dev)};
  const float lr = 0.1f;
  try {
    if (fake) {
      auto data = lt::data::fake_data({batch, 1, 28, 28}, classes, 200, /*seed=*/1);
      for (int e = 0; e < epochs; ++e)
        std::cout << "epoch " << e << ": loss " << run_epoch(model, data, dev, lr) << " (fake data)\n";
    } else {
      const lt::data::Normalize normalize{lt::data::FashionMnist::pixel_mean, lt::data::FashionMnist::pixel_std};
      lt::data::FashionMnist train(dir, {.transform = normalize});
      lt::data::FashionMnist test(dir, {.split = lt::data::Split::test, .transform = normalize});
      lt::data::DataLoader train_loader(train, {.batch_size = batch, .shuffle = true, .seed = 1});
      lt::data::DataLoader test_loader(test, {.batch_size = 1000});
      for (int e = 0; e < epochs; ++e) {
        auto start = std::chrono::steady_clock::now();
        double loss = run_epoch(model, train_loader, dev, lr);
        double acc = accuracy(model, test_loader, dev);
        double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        std::cout << "epoch " << e << ": loss " << loss << ", test accuracy " << acc << " (" << seconds << " s)\n";
      }
    }
  } catch (const lt::Error& e) {
    std::cerr << e.what() << '\n';
    return 1;
  }
  std::cout << "MarkStep " << lt::metrics::counter("MarkStep") << ", TransferToDevice "
            << lt::metrics::counter("TransferToDevice") << '\n';
}
