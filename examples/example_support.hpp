#pragma once
// What the Fashion-MNIST examples share: their command line and how they count correct
// classifications on the lazy device.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <optional>
#include <string>
#include <utility>

#include <lazytensor/data.hpp>

/// [--epochs N] [--dir DIR] [--fake-data] [--replicas R] [--save DIR] [--resume FILE]
struct ExampleOptions {
  int epochs = 3;
  bool fake = false;
  std::string dir{lt::data::FashionMnist::default_directory};
  int replicas = 1;
  std::string save_dir;  // a checkpoint per epoch goes here
  std::string resume;    // the checkpoint to continue from
  lt::DType precision = lt::f32;  // bf16: the model runs under lt::autocast(bf16)

  /// The options, or nothing (after printing the usage) when the command line is wrong.
  static std::optional<ExampleOptions> parse(int argc, char** argv) {
    ExampleOptions o;
    for (int i = 1; i < argc; ++i) {
      if (!std::strcmp(argv[i], "--epochs") && i + 1 < argc) o.epochs = std::atoi(argv[++i]);
      else if (!std::strcmp(argv[i], "--dir") && i + 1 < argc) o.dir = argv[++i];
      else if (!std::strcmp(argv[i], "--fake-data")) o.fake = true;
      else if (!std::strcmp(argv[i], "--replicas") && i + 1 < argc) o.replicas = std::atoi(argv[++i]);
      else if (!std::strcmp(argv[i], "--save") && i + 1 < argc) o.save_dir = argv[++i];
      else if (!std::strcmp(argv[i], "--resume") && i + 1 < argc) o.resume = argv[++i];
      else if (!std::strcmp(argv[i], "--precision") && i + 1 < argc && (!std::strcmp(argv[i + 1], "f32") || !std::strcmp(argv[i + 1], "bf16")))
        o.precision = !std::strcmp(argv[++i], "bf16") ? lt::bf16 : lt::f32;
      else {
        std::cerr << "usage: " << argv[0]
                  << " [--epochs N] [--dir DIR] [--fake-data] [--replicas R] [--save DIR] [--resume FILE] [--precision f32|bf16]\n";
        return std::nullopt;
      }
    }
    return o;
  }
};

/// Examples of `source` whose largest score from `scores(x)` is the label, and examples seen.
/// The count stays on the device until the end: one read, not one per batch.
template <class Source, class Scores>
std::pair<std::int64_t, std::int64_t> classified(Source& source, lt::Device dev, Scores&& scores) {
  lt::Tensor correct = lt::zeros({}, dev, lt::i64);
  std::int64_t seen = 0;
  for (auto [x, y] : lt::data::DeviceLoader(source, dev)) {
    correct = lt::Tensor(correct + lt::Tensor(scores(x).argmax(1) == y).sum());
    seen += x.size(0);
  }
  return {correct.item<std::int64_t>(), seen};
}

/// The share of `source`'s examples whose largest score from `scores(x)` is the label.
template <class Source, class Scores>
double classification_accuracy(Source& source, lt::Device dev, Scores&& scores) {
  auto [correct, seen] = classified(source, dev, std::forward<Scores>(scores));
  return seen ? static_cast<double>(correct) / static_cast<double>(seen) : 0.0;
}
