#pragma once
// Shape bucketing for variable-length token sequences. A step graph's key holds its shapes, so
// a model fed batches padded to their own longest sequence compiles one plan per distinct
// length; padded to one of a few bucket lengths instead, it compiles at most one per bucket.
// The metrics say what that bought and cost: BucketRecompilesAvoided counts batches whose own
// length was new but whose bucket had been used already (a plan that the cache then serves),
// BucketPaddingTokens the padding positions made, of which BucketExtraPaddingTokens lie beyond
// the batch's longest sequence (the price of bucketing itself), and BucketRealTokens the tokens.
#include <algorithm>
#include <cstdint>
#include <set>
#include <span>
#include <vector>

#include "lazytensor/core/checked_size.hpp"
#include "lazytensor/core/error.hpp"
#include "lazytensor/core/metrics.hpp"
#include "lazytensor/trace/dispatch.hpp"
#include "lazytensor/trace/tensor.hpp"

namespace lt::data {

/// A batch of token sequences padded to one length.
struct PaddedBatch {
  /// [N, L] i64 token ids, each row a sequence followed by the pad id.
  Tensor tokens;
  /// [N, L] bool, true at padding: MultiheadAttention's key_padding_mask convention.
  Tensor padding_mask;
  /// Each sequence's own length.
  std::vector<std::int64_t> lengths;
  /// L: the bucket the batch was padded to.
  std::int64_t length = 0;
};

namespace detail {

/// The bucket lengths checked (each positive), sorted and without repeats.
inline std::vector<std::int64_t> checked_buckets(std::span<const std::int64_t> buckets) {
  LT_CHECK(!buckets.empty(), "pad_to_bucket: the bucket list is empty");
  std::vector<std::int64_t> b(buckets.begin(), buckets.end());
  for (std::int64_t v : b) LT_CHECK(v > 0, "pad_to_bucket: bucket lengths must be positive, got ", v);
  std::sort(b.begin(), b.end());
  b.erase(std::unique(b.begin(), b.end()), b.end());
  return b;
}

/// The longest sequence of a batch, checked against the largest bucket.
inline std::int64_t longest(std::span<const std::vector<std::int64_t>> sequences, std::int64_t largest) {
  LT_CHECK(!sequences.empty(), "pad_to_bucket: the batch holds no sequence");
  std::int64_t most = 0;
  for (std::size_t i = 0; i < sequences.size(); ++i) {
    const auto n = static_cast<std::int64_t>(sequences[i].size());
    LT_CHECK(n <= largest, "pad_to_bucket: sequence ", i, " has ", n, " tokens, more than the largest bucket (", largest,
             ")");
    most = std::max(most, n);
  }
  return most;
}

/// Pads `sequences` to `length` (at least each one's own) on `device`, counting the padding.
inline PaddedBatch pad(std::span<const std::vector<std::int64_t>> sequences, std::int64_t length, std::int64_t longest,
                       std::int64_t pad_id, Device device) {
  const auto n = static_cast<std::int64_t>(sequences.size());
  const Shape shape{n, length};
  checked_numel(shape, "pad_to_bucket");
  Array tokens = Array::empty(DType::i64, shape), mask = Array::empty(DType::boolean, shape);
  std::int64_t* t = tokens.view.ptr<std::int64_t>();
  bool* m = mask.view.ptr<bool>();
  PaddedBatch out;
  out.length = length;
  std::int64_t real = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    const std::vector<std::int64_t>& s = sequences[static_cast<std::size_t>(i)];
    const auto len = static_cast<std::int64_t>(s.size());
    std::copy(s.begin(), s.end(), t + i * length);
    std::fill(t + i * length + len, t + (i + 1) * length, pad_id);
    std::fill(m + i * length, m + i * length + len, false);
    std::fill(m + i * length + len, m + (i + 1) * length, true);
    out.lengths.push_back(len);
    real += len;
  }
  metrics::counter_handle("BucketRealTokens").add(real);
  metrics::counter_handle("BucketPaddingTokens").add(n * length - real);
  metrics::counter_handle("BucketExtraPaddingTokens").add(n * (length - longest));
  if (device.is_lazy()) metrics::counter_handle("TransferToDevice").add(2);
  out.tokens = tensor_from_array(tokens, device);
  out.padding_mask = tensor_from_array(mask, device);
  return out;
}

}  // namespace detail

/// Pads a batch of token sequences to the shortest of `buckets` that holds its longest one, with
/// `pad_id`, on `device`. Raises lt::Error for an empty bucket list, a bucket length below 1, an
/// empty batch, or a sequence longer than the largest bucket. Counts BucketRealTokens,
/// BucketPaddingTokens and BucketExtraPaddingTokens (see the file's head); a Bucketer also
/// counts the recompiles bucketing avoided.
inline PaddedBatch pad_to_bucket(std::span<const std::vector<std::int64_t>> sequences,
                                 std::span<const std::int64_t> buckets, std::int64_t pad_id = 0, Device device = cpu) {
  std::vector<std::int64_t> b = detail::checked_buckets(buckets);
  const std::int64_t most = detail::longest(sequences, b.back());
  return detail::pad(sequences, *std::lower_bound(b.begin(), b.end(), most), most, pad_id, device);
}

/// pad_to_bucket with fixed buckets, remembering the lengths and buckets it has seen: a batch
/// whose own longest length is new, but whose bucket is not, would have compiled a plan of
/// its own unpadded; it counts in BucketRecompilesAvoided.
class Bucketer {
 public:
  /// Buckets as pad_to_bucket's (checked here: lt::Error for an empty list or a length below 1).
  explicit Bucketer(std::span<const std::int64_t> buckets, std::int64_t pad_id = 0, Device device = cpu)
      : buckets_(detail::checked_buckets(buckets)), pad_id_(pad_id), device_(device) {}

  /// The batch padded to its bucket; lt::Error for an empty batch or a sequence longer than
  /// the largest bucket.
  PaddedBatch operator()(std::span<const std::vector<std::int64_t>> sequences) {
    const std::int64_t most = detail::longest(sequences, buckets_.back());
    const std::int64_t bucket = *std::lower_bound(buckets_.begin(), buckets_.end(), most);
    const bool new_length = lengths_.insert(most).second, new_bucket = used_.insert(bucket).second;
    if (new_length && !new_bucket) metrics::counter_handle("BucketRecompilesAvoided").add();
    return detail::pad(sequences, bucket, most, pad_id_, device_);
  }

  /// The bucket lengths, ascending.
  const std::vector<std::int64_t>& buckets() const { return buckets_; }
  /// How many distinct batch lengths it has padded: the plans a step would compile unbucketed.
  std::int64_t lengths_seen() const { return static_cast<std::int64_t>(lengths_.size()); }
  /// How many buckets it has used: the plans a step compiles bucketed.
  std::int64_t buckets_used() const { return static_cast<std::int64_t>(used_.size()); }

 private:
  std::vector<std::int64_t> buckets_;
  std::int64_t pad_id_;
  Device device_;
  std::set<std::int64_t> lengths_, used_;
};

}  // namespace lt::data
