#pragma once
// MNIST and Fashion-MNIST: the four IDX files of such a data set, found in a directory and
// served as a dataset of (image, label) examples.
#include <array>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <utility>

#include "lazytensor/data/dataset.hpp"
#include "lazytensor/data/idx.hpp"
#include "lazytensor/runtime/values.hpp"

namespace lt::data {

enum class Split { train, test };

/// Options of Mnist and FashionMnist.
struct MnistOptions {
  /// Which files to read: train (60,000 examples) or test (t10k, 10,000).
  Split split = Split::train;
  /// Applied once to all images, f32 [N, 1, 28, 28] with values in [0, 1], as they are
  /// loaded: e.g. Normalize{FashionMnist::pixel_mean, FashionMnist::pixel_std}. Per-example work belongs in a MapDataset.
  std::function<Tensor(const Tensor&)> transform;
};

namespace detail {
/// The file of `stem` ("train-images-idx3-ubyte") in `dir`, compressed or not; the dotted
/// spelling of the original MNIST site ("train-images.idx3-ubyte") is accepted too.
inline std::filesystem::path find_idx_file(const std::filesystem::path& dir, std::string_view stem) {
  std::string dotted(stem);
  dotted[dotted.rfind("-idx")] = '.';
  for (const std::string& name : {std::string(stem), dotted})
    for (const char* suffix : {"", ".gz"}) {
      std::filesystem::path p = dir / (name + suffix);
      std::error_code ec;
      if (std::filesystem::is_regular_file(p, ec)) return p;
    }
  fail("MNIST: no ", stem, " (nor ", stem, ".gz) in ", dir);
}

inline std::array<Tensor, 2> load_mnist(const std::filesystem::path& dir, const MnistOptions& options) {
  const std::string prefix = options.split == Split::train ? "train" : "t10k";
  const std::filesystem::path image_file = find_idx_file(dir, prefix + "-images-idx3-ubyte");
  const std::filesystem::path label_file = find_idx_file(dir, prefix + "-labels-idx1-ubyte");
  Tensor images = read_idx_images(image_file);
  Tensor labels = read_idx_labels(label_file);
  LT_CHECK(images.size(0) == labels.size(0), "MNIST: ", image_file, " holds ", images.size(0), " images but ",
           label_file, " holds ", labels.size(0), " labels");
  const std::int64_t* label = labels.impl().data.view.ptr<std::int64_t>();
  for (std::int64_t i = 0; i < labels.numel(); ++i)
    LT_CHECK(label[i] >= 0 && label[i] < 10, label_file, ": label ", label[i], " of example ", i,
             " is not a class in [0, 10)");
  if (options.transform) {
    images = options.transform(images).cpu();
    LT_CHECK(images.defined() && images.size(0) == labels.size(0),
             "MNIST: the transform must keep one image per label, got ", describe(images));
  }
  return {std::move(images), std::move(labels)};
}
}  // namespace detail

/// MNIST-format data in a directory: `train-images-idx3-ubyte` and `train-labels-idx1-ubyte`
/// (`t10k-...` for the test split), each possibly gzip-compressed (`.gz`). Examples are
/// {image f32 [1, 28, 28], label i64 []}; a DataLoader stacks them into [B, 1, 28, 28] and [B].
class Mnist : public TensorDataset<2> {
 public:
  /// The number of classes: labels lie in [0, 10).
  static constexpr std::int64_t classes = 10;

  /// Reads and checks the split's files in `dir`; raises lt::Error naming the file and the fault for a
  /// missing, truncated or corrupt file or a label outside [0, 10).
  explicit Mnist(const std::filesystem::path& dir, const MnistOptions& options = {})
      : TensorDataset<2>(detail::load_mnist(dir, options)) {}

  /// All images, [N, 1, rows, columns], after the transform.
  const Tensor& images() const { return tensors()[0]; }
  /// All labels, i64 [N], each in [0, 10).
  const Tensor& labels() const { return tensors()[1]; }
};

/// Fashion-MNIST: the same format, ten kinds of clothing instead of digits. By default read
/// from where Debian's `dataset-fashion-mnist` package puts it.
class FashionMnist : public Mnist {
 public:
  /// Where Debian's dataset-fashion-mnist package installs the files.
  static constexpr std::string_view default_directory = "/usr/share/datasets/fashion-mnist";
  /// @{
  /// Mean and standard deviation of the training images' pixels in [0, 1].
  static constexpr double pixel_mean = 0.2860, pixel_std = 0.3530;
  /// @}
  /// The classes' names, by label.
  static constexpr std::array<std::string_view, 10> class_names = {
      "T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt", "Sneaker", "Bag", "Ankle boot"};

  /// Reads and checks the split's files in `dir` (Debian's copy by default), as Mnist does.
  explicit FashionMnist(const std::filesystem::path& dir = default_directory, const MnistOptions& options = {})
      : Mnist(dir, options) {}
};

}  // namespace lt::data
