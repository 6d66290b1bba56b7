// pad_to_bucket and Bucketer: padding to the shortest bucket that holds a batch, the mask, the
// metrics of padding and of recompiles avoided (checked against the plans a step compiles),
// and bad input.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include <lazytensor/data.hpp>
#include <lazytensor/lazytensor.hpp>

namespace lt::data {
namespace {

using Seqs = std::vector<std::vector<std::int64_t>>;

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(Bucketing, PadsToTheShortestBucketThatHoldsTheBatch) {
  const Seqs seqs = {{5, 6, 7}, {8}, {9, 10, 11, 12, 13}};
  const std::vector<std::int64_t> buckets = {16, 4, 8, 8};  // unsorted, with a repeat
  metrics::reset();
  PaddedBatch b = pad_to_bucket(seqs, buckets, /*pad_id=*/-1);
  EXPECT_EQ(b.length, 8);
  EXPECT_EQ(b.tokens.shape(), (Shape{3, 8}));
  EXPECT_EQ(b.tokens.dtype(), DType::i64);
  EXPECT_EQ(b.padding_mask.dtype(), DType::boolean);
  EXPECT_EQ(b.lengths, (std::vector<std::int64_t>{3, 1, 5}));
  std::vector<std::int64_t> tokens = b.tokens.to_vector<std::int64_t>();
  std::vector<bool> mask = b.padding_mask.to_vector<bool>();
  for (std::size_t i = 0; i < seqs.size(); ++i)
    for (std::size_t j = 0; j < 8; ++j) {
      const bool real = j < seqs[i].size();
      EXPECT_EQ(tokens[i * 8 + j], real ? seqs[i][j] : -1) << i << ", " << j;
      EXPECT_EQ(mask[i * 8 + j], !real) << i << ", " << j;
    }
  EXPECT_EQ(metrics::counter("BucketRealTokens"), 9);
  EXPECT_EQ(metrics::counter("BucketPaddingTokens"), 24 - 9);
  EXPECT_EQ(metrics::counter("BucketExtraPaddingTokens"), 3 * (8 - 5));
}

TEST(Bucketing, ALengthEqualToABucketTakesIt) {
  EXPECT_EQ(pad_to_bucket(Seqs{{1, 2, 3, 4}}, std::vector<std::int64_t>{4, 8}).length, 4);
  EXPECT_EQ(pad_to_bucket(Seqs{{}}, std::vector<std::int64_t>{4, 8}).length, 4);  // an empty sequence: all padding
}

TEST(Bucketing, OnALazyDevice) {
  PaddedBatch b = pad_to_bucket(Seqs{{1, 2}, {3}}, std::vector<std::int64_t>{2}, 0, device());
  EXPECT_TRUE(b.tokens.device().is_lazy());
  EXPECT_EQ(sum(b.tokens).item<std::int64_t>(), 6);
  EXPECT_EQ(sum(b.padding_mask.to(DType::i64)).item<std::int64_t>(), 1);
}

TEST(Bucketing, BadInput) {
  const std::vector<std::int64_t> none, buckets = {4, 8};
  std::string e = error_of([&] { pad_to_bucket(Seqs{{1}}, none); });
  EXPECT_NE(e.find("pad_to_bucket"), std::string::npos) << e;
  EXPECT_NE(e.find("bucket list is empty"), std::string::npos) << e;
  e = error_of([&] { Bucketer b(none); });
  EXPECT_NE(e.find("bucket list is empty"), std::string::npos) << e;
  e = error_of([&] { pad_to_bucket(Seqs{{1}, {1, 2, 3, 4, 5, 6, 7, 8, 9}}, buckets); });
  EXPECT_NE(e.find("sequence 1 has 9 tokens"), std::string::npos) << e;
  EXPECT_NE(e.find("largest bucket (8)"), std::string::npos) << e;
  e = error_of([&] {
    Bucketer b(buckets);
    b(Seqs{{1, 2, 3, 4, 5, 6, 7, 8, 9}});
  });
  EXPECT_NE(e.find("sequence 0 has 9 tokens"), std::string::npos) << e;
  e = error_of([&] { pad_to_bucket(Seqs{}, buckets); });
  EXPECT_NE(e.find("holds no sequence"), std::string::npos) << e;
  e = error_of([&] { pad_to_bucket(Seqs{{1}}, std::vector<std::int64_t>{4, 0}); });
  EXPECT_NE(e.find("must be positive, got 0"), std::string::npos) << e;
}

/// The sequences of a batch whose longest has `n` tokens.
Seqs batch_of_length(std::int64_t n) {
  Seqs s(3);
  for (std::int64_t j = 0; j < n; ++j) s[0].push_back(j % 7);
  s[1] = {1, 2};
  s[2] = {3};
  return s;
}

TEST(Bucketing, RecompilesAvoidedAreThePlansNotCompiled) {
  // A step over a batch: a masked mean of an embedding-like lookup, its shapes the batch's.
  Tensor table = randn({7, 4}, device());
  sync();
  auto step = [&](const PaddedBatch& b) {
    Tensor emb = index_select(table, 0, b.tokens.reshape({-1})).reshape({b.tokens.size(0), b.length, 4});
    Tensor keep = logical_not(b.padding_mask).to(DType::f32).unsqueeze(-1);
    Tensor y = sum(emb * keep) / sum(keep);
    return y.item<float>();
  };
  const std::vector<std::int64_t> lengths = {3, 5, 7, 3, 9, 12, 16, 5, 11};  // 7 distinct, in buckets 8 and 16
  Bucketer bucketer(std::vector<std::int64_t>{8, 16}, 0, device());
  step(bucketer(batch_of_length(2)));  // bucket 8's plan, compiled here
  metrics::reset();
  for (std::int64_t n : lengths) step(bucketer(batch_of_length(n)));
  EXPECT_EQ(bucketer.buckets_used(), 2);
  EXPECT_EQ(bucketer.lengths_seen(), 8);  // 2, then the 7 distinct lengths above
  // Bucket 16's plan is the only one compiled in the loop; unbucketed, each new length would be.
  EXPECT_EQ(metrics::counter("UncachedCompile"), 1);
  // 3, 5 and 7 (bucket 8 was used before the loop), then 12, 16 and 11 (after 9 opened bucket 16).
  EXPECT_EQ(metrics::counter("BucketRecompilesAvoided"), 6);
  EXPECT_EQ(bucketer.lengths_seen() - bucketer.buckets_used(), 6);
}

}  // namespace
}  // namespace lt::data
