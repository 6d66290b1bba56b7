// MNIST-format directories: a small one the test writes (plain and gzip), its faults, and the
// real Fashion-MNIST of Debian's dataset-fashion-mnist package where it is installed.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <string>
#include <vector>

#include "data_helpers.hpp"

namespace lt::data {
namespace {

using testing::Bytes;
using testing::idx_bytes;
using testing::ScratchDir;

/// Writes an MNIST-format split of `n` 28x28 images with labels i % 10; gzip-compressed files
/// when `gz`. Image i is filled with the value i.
void write_split(const ScratchDir& dir, const std::string& prefix, std::uint32_t n, bool gz) {
  Bytes images(static_cast<std::size_t>(n) * 28 * 28), labels(n);
  for (std::uint32_t i = 0; i < n; ++i) {
    std::fill_n(images.begin() + static_cast<std::ptrdiff_t>(i) * 28 * 28, 28 * 28, static_cast<std::uint8_t>(i));
    labels[i] = static_cast<std::uint8_t>(i % 10);
  }
  Bytes image_file = idx_bytes(0x08, {n, 28, 28}, images), label_file = idx_bytes(0x08, {n}, labels);
  const std::string suffix = gz ? ".gz" : "";
  testing::write_file(dir / (prefix + "-images-idx3-ubyte" + suffix), gz ? testing::gzip_program(image_file, 6, dir) : image_file);
  testing::write_file(dir / (prefix + "-labels-idx1-ubyte" + suffix), gz ? testing::gzip_program(label_file, 6, dir) : label_file);
}

TEST(Mnist, LoadsBothSplitsPlainAndCompressed) {
  for (bool gz : {false, true}) {
    ScratchDir dir;
    write_split(dir, "train", 30, gz);
    write_split(dir, "t10k", 12, gz);
    Mnist train(dir.path());
    Mnist test(dir.path(), {.split = Split::test});
    EXPECT_EQ(train.size(), 30);
    EXPECT_EQ(test.size(), 12);
    EXPECT_EQ(train.images().shape(), (Shape{30, 1, 28, 28}));
    EXPECT_EQ(train.labels().shape(), (Shape{30}));
    auto [image, label] = train.get(13);
    EXPECT_EQ(image.shape(), (Shape{1, 28, 28}));
    EXPECT_EQ(label.item<std::int64_t>(), 3);
    EXPECT_FLOAT_EQ(image.amax().item<float>(), 13.0f / 255.0f);
    EXPECT_FLOAT_EQ(image.amin().item<float>(), 13.0f / 255.0f);
  }
}

TEST(Mnist, TransformAppliesToTheImages) {
  ScratchDir dir;
  write_split(dir, "train", 10, false);
  Mnist plain(dir.path());
  Mnist normalized(dir.path(), {.transform = Normalize{0.5, 0.25}});
  auto raw = plain.images().to_vector<float>(), norm = normalized.images().to_vector<float>();
  ASSERT_EQ(raw.size(), norm.size());
  for (std::size_t i = 0; i < raw.size(); i += 97) EXPECT_FLOAT_EQ(norm[i], (raw[i] - 0.5f) / 0.25f);
  EXPECT_THROW((Normalize{0.0, 0.0})(plain.images()), Error);
  EXPECT_THROW(Mnist(dir.path(), {.transform = [](const Tensor& x) { return x.sum(); }}), Error);
}

TEST(Mnist, FindsTheDottedSpelling) {
  ScratchDir dir;
  write_split(dir, "train", 5, false);
  std::filesystem::rename(dir / "train-images-idx3-ubyte", dir / "train-images.idx3-ubyte");
  EXPECT_EQ(Mnist(dir.path()).size(), 5);
}

TEST(Mnist, FaultsNameTheFiles) {
  ScratchDir dir;
  auto message = [&](const MnistOptions& options = {}) -> std::string {
    try {
      Mnist m(dir.path(), options);
    } catch (const Error& e) {
      return e.what();
    }
    ADD_FAILURE() << "no lt::Error";
    return {};
  };
  EXPECT_NE(message().find("no train-images-idx3-ubyte"), std::string::npos) << message();
  write_split(dir, "train", 5, false);
  testing::write_file(dir / "train-labels-idx1-ubyte", idx_bytes(0x08, {4}, {0, 1, 2, 3}));
  EXPECT_NE(message().find("holds 5 images but"), std::string::npos) << message();
  testing::write_file(dir / "train-labels-idx1-ubyte", idx_bytes(0x08, {5}, {0, 1, 12, 3, 4}));
  EXPECT_NE(message().find("label 12 of example 2 is not a class"), std::string::npos) << message();
  EXPECT_NE(message({.split = Split::test}).find("no t10k-images-idx3-ubyte"), std::string::npos);
}

TEST(Mnist, FeedsADataLoader) {
  ScratchDir dir;
  write_split(dir, "train", 25, true);
  DataLoader loader(Mnist(dir.path()), {.batch_size = 10, .shuffle = true, .seed = 2});
  std::array<int, 10> per_class{};
  std::int64_t images = 0;
  for (auto [x, y] : loader) {
    EXPECT_EQ(x.shape()[1], 1);
    EXPECT_EQ(x.shape()[2], 28);
    for (std::int64_t label : y.to_vector<std::int64_t>()) ++per_class[static_cast<std::size_t>(label)];
    images += x.size(0);
  }
  EXPECT_EQ(images, 25);
  EXPECT_EQ(per_class, (std::array<int, 10>{3, 3, 3, 3, 3, 2, 2, 2, 2, 2}));
}

bool fashion_mnist_installed() {
  return std::filesystem::exists(std::filesystem::path(FashionMnist::default_directory) / "train-images-idx3-ubyte.gz");
}

TEST(FashionMnist, RealTrainingSet) {
  if (!fashion_mnist_installed()) GTEST_SKIP() << "dataset-fashion-mnist is not installed";
  FashionMnist train;
  EXPECT_EQ(train.size(), 60000);
  EXPECT_EQ(train.images().shape(), (Shape{60000, 1, 28, 28}));
  EXPECT_EQ(train.labels().dtype(), i64);
  std::array<std::int64_t, 10> per_class{};
  for (std::int64_t label : train.labels().to_vector<std::int64_t>()) ++per_class[static_cast<std::size_t>(label)];
  for (std::size_t c = 0; c < 10; ++c) EXPECT_EQ(per_class[c], 6000) << FashionMnist::class_names[c];
  // The published pixel statistics, which the Normalize of the examples uses.
  const double mean = train.images().to(f64).mean().item<double>();
  const double stddev = train.images().to(f64).std().item<double>();
  EXPECT_NEAR(mean, FashionMnist::pixel_mean, 5e-4);
  EXPECT_NEAR(stddev, FashionMnist::pixel_std, 5e-4);
  FashionMnist normalized(FashionMnist::default_directory,
                          {.transform = Normalize{FashionMnist::pixel_mean, FashionMnist::pixel_std}});
  EXPECT_NEAR(normalized.images().to(f64).mean().item<double>(), 0.0, 2e-3);
  EXPECT_NEAR(normalized.images().to(f64).std().item<double>(), 1.0, 2e-3);
}

TEST(FashionMnist, RealTestSetThroughTheLoaders) {
  if (!fashion_mnist_installed()) GTEST_SKIP() << "dataset-fashion-mnist is not installed";
  FashionMnist test(FashionMnist::default_directory, {.split = Split::test});
  EXPECT_EQ(test.size(), 10000);
  DataLoader loader(test, {.batch_size = 256, .shuffle = true, .seed = 1, .drop_last = true});
  std::array<std::int64_t, 10> per_class{};
  std::int64_t batches = 0;
  for (auto [x, y] : DeviceLoader(loader, device())) {
    EXPECT_EQ(x.shape(), (Shape{256, 1, 28, 28}));
    Tensor counts = one_hot(y, 10).sum(0);  // traced on the lazy device, run per batch
    auto c = counts.to_vector<std::int64_t>();
    for (std::size_t k = 0; k < 10; ++k) per_class[k] += c[k];
    ++batches;
  }
  EXPECT_EQ(batches, 10000 / 256);
  std::int64_t total = 0;
  for (std::int64_t c : per_class) total += c;
  EXPECT_EQ(total, batches * 256);
}

}  // namespace
}  // namespace lt::data
