#pragma once
// Fake data: one fixed batch served again and again, for timing a training step without
// reading files.
#include <array>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <utility>

#include "lazytensor/data/example.hpp"
#include "lazytensor/data/seeded_random.hpp"

namespace lt::data {

/// `sample` served `count` times: a range of batches, as a DataLoader is one.
///
///   lt::data::SampleGenerator fake(std::array{images, labels}, 1000);   // cpu tensors
///   for (auto [x, y] : lt::data::DeviceLoader(fake, dev)) { ... }
template <Example Batch>
class SampleGenerator {
 public:
  /// Serves `sample` `count` times; raises lt::Error for a negative count.
  SampleGenerator(Batch sample, std::int64_t count) : sample_(std::move(sample)), count_(count) {
    LT_CHECK(count >= 0, "SampleGenerator: negative count ", count);
  }

  /// The number of batches it serves.
  std::int64_t size() const { return count_; }
  /// The batch it serves.
  const Batch& sample() const { return sample_; }

  /// An input iterator that serves the same batch until the count runs out.
  class iterator {
   public:
    /// The batch type.
    using value_type = Batch;
    /// Required of an input iterator; unused.
    using difference_type = std::ptrdiff_t;

    iterator() = default;
    /// The batch.
    const Batch& operator*() const { return *sample_; }
    /// The batch's fields.
    const Batch* operator->() const { return sample_; }
    /// Counts one batch served.
    iterator& operator++() {
      --left_;
      return *this;
    }
    /// Advances, as operator++().
    void operator++(int) { ++*this; }
    /// True once `count` batches have been served.
    friend bool operator==(const iterator& it, std::default_sentinel_t) { return it.left_ == 0; }

   private:
    friend class SampleGenerator;
    iterator(const Batch* sample, std::int64_t left) : sample_(sample), left_(left) {}
    const Batch* sample_ = nullptr;
    std::int64_t left_ = 0;
  };

  /// The first of `count` batches.
  iterator begin() const { return iterator(&sample_, count_); }
  /// The end of the batches.
  std::default_sentinel_t end() const { return {}; }

 private:
  Batch sample_;
  std::int64_t count_;
};

/// A batch of images with values uniform in [0, 1) and labels uniform in [0, classes), drawn
/// from `seed` alone (not lt::manual_seed), served `count` times. `image_batch_shape` includes
/// the batch extent, e.g. {64, 1, 28, 28}; the labels are i64 [64].
inline SampleGenerator<std::array<Tensor, 2>> fake_data(Shape image_batch_shape, std::int64_t classes,
                                                        std::int64_t count, std::uint64_t seed = 0) {
  LT_CHECK(image_batch_shape.rank() >= 1, "fake_data: the image shape needs a leading batch extent");
  for (std::int64_t extent : image_batch_shape)
    LT_CHECK(extent >= 0, "fake_data: negative extent in image shape ", image_batch_shape);
  LT_CHECK(classes >= 1, "fake_data: classes must be at least 1, got ", classes);
  SeededRandom random(seed, 0);
  Array images = Array::empty(f32, image_batch_shape);
  for (float& v : std::span(images.view.ptr<float>(), static_cast<std::size_t>(images.view.numel())))
    v = random.uniform_float();
  Array labels = Array::empty(i64, Shape{image_batch_shape[0]});
  for (std::int64_t& v : std::span(labels.view.ptr<std::int64_t>(), static_cast<std::size_t>(image_batch_shape[0])))
    v = static_cast<std::int64_t>(random.below(static_cast<std::uint64_t>(classes)));
  return {{tensor_from_array(std::move(images), cpu), tensor_from_array(std::move(labels), cpu)}, count};
}

}  // namespace lt::data
