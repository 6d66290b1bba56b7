// Typed op attributes: encode and decode are inverse, decode checks every count, data words
// stay out of a graph's key however many an op has, and no file reads attributes by position.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <lazytensor/lazytensor.hpp>

namespace lt {
namespace {

std::string error_of(void (*call)()) {
  try {
    call();
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "nothing was raised";
  return {};
}

TEST(OpAttrs, EncodeAndDecodeAreInverse) {
  const std::int64_t shape[] = {2, 3, 5};
  const Attrs a = encode(FullAttrs{DType::i64, shape, {-7}, 2.5});
  EXPECT_EQ(std::vector<std::int64_t>(a.ints.begin(), a.ints.end()), (std::vector<std::int64_t>{static_cast<std::int64_t>(DType::i64), 2, 3, 5}))
      << "the dtype, then the shape";
  EXPECT_EQ(std::vector<std::int64_t>(a.values.begin(), a.values.end()), std::vector<std::int64_t>{-7});
  EXPECT_EQ(std::vector<double>(a.floats.begin(), a.floats.end()), std::vector<double>{2.5});
  const auto f = decode<FullAttrs>(a);
  EXPECT_EQ(f.dtype, DType::i64);
  EXPECT_EQ(std::vector<std::int64_t>(f.shape.begin(), f.shape.end()), (std::vector<std::int64_t>{2, 3, 5}));
  EXPECT_EQ(f.integer.value, -7);
  EXPECT_EQ(f.real, 2.5);

  const Conv2dGradAttrs g{{1, 2, 3, 4, 5, 6, 7}, 8, 9};
  const auto back = decode<Conv2dGradAttrs>(encode(g));
  EXPECT_EQ(back.conv.stride_w, 2);
  EXPECT_EQ(back.conv.groups, 7);
  EXPECT_EQ(back.w, 9);

  const RandintAttrs r{{DType::i32, shape, {~std::uint64_t{0}}, {3}}, {-4}, {9}};
  const auto r2 = decode<RandintAttrs>(encode(r));
  EXPECT_EQ(r2.draw.seed.value, ~std::uint64_t{0}) << "unsigned data words keep every bit";
  EXPECT_EQ(r2.low.value, -4);
  EXPECT_EQ(r2.high.value, 9);
}

TEST(OpAttrs, AttributesAreEqualWhenEveryListIs) {
  const Attrs a{{1, 2}, {3}, {0.5}};
  EXPECT_EQ(a, (Attrs{{1, 2}, {3}, {0.5}}));
  EXPECT_NE(a, (Attrs{{1, 2}, {3}, {0.25}})) << "a real differs";
  EXPECT_NE(a, (Attrs{{1, 2}, {4}, {0.5}})) << "a data word differs";
  EXPECT_NE(a, (Attrs{{1, 3}, {3}, {0.5}})) << "a structural word differs";
  EXPECT_NE(a, (Attrs{{1, 2}, {}, {3.0, 0.5}})) << "the same words in other lists";
  EXPECT_NE(a, (Attrs{{1, 2, 3}, {}, {0.5}})) << "the same words in other lists";
}

TEST(OpAttrs, AnOptionalRealIsPresentOrAbsent) {
  const std::int64_t dims[] = {1};
  EXPECT_FALSE(decode<ReductionAttrs>(encode(ReductionAttrs{true, dims, std::nullopt})).correction.has_value());
  const auto v = decode<ReductionAttrs>(encode(ReductionAttrs{false, dims, 0.5}));
  ASSERT_TRUE(v.correction.has_value());
  EXPECT_EQ(*v.correction, 0.5);
  EXPECT_EQ(v.dims.size(), 1u);
}

TEST(OpAttrs, DecodingWordsOfTheWrongCountsRaises) {
  EXPECT_NE(error_of([] { decode<SliceAttrs>(encode(DimAttrs{1})); }).find("integer attributes"), std::string::npos);
  EXPECT_NE(error_of([] { decode<DimAttrs>(encode(SliceAttrs{0, 1, 2, 1})); }).find("expected 1 integer"),
            std::string::npos);
  EXPECT_NE(error_of([] { decode<ScalarAttrs>(encode(CastAttrs{DType::f32})); }).find("data"), std::string::npos);
  EXPECT_NE(error_of([] { decode<AttentionAttrs>(Attrs{}); }).find("real"), std::string::npos);
}

TEST(OpAttrs, LeftOutAttributesAreTheDefaultsOnlyWhereAllowed) {
  EXPECT_FALSE(decode_or_default<GeluAttrs>(Attrs{}).tanh_form);
  EXPECT_EQ(decode_or_default<SoftplusAttrs>(Attrs{}).threshold, 20);
  EXPECT_THROW(decode<ClampAttrs>(Attrs{}), Error);
}

// ---- an op of twelve data ints --------------------------------------------------------------

/// out[i] = x[i] + weights[i % 12] * scale: twelve data words, one structural word.
struct WeightedAttrs {
  std::int64_t scale = 1;
  std::array<AttrData<std::int64_t>, 12> weights{};
  LT_ATTR_FIELDS(scale, weights[0], weights[1], weights[2], weights[3], weights[4], weights[5], weights[6],
                 weights[7], weights[8], weights[9], weights[10], weights[11])
};

Meta weighted_infer(std::span<const Meta> in, const Attrs& a) {
  decode<WeightedAttrs>(a);
  LT_CHECK(in[0].dtype == DType::i64, "takes i64 values");
  return {in[0].shape, DType::i64};
}
void weighted_kernel(std::span<const View> in, const View& out, const Attrs& attrs) {
  const auto a = decode<WeightedAttrs>(attrs);
  Array x = Array::empty(DType::i64, in[0].shape);
  kernels::copy_into(in[0], x.view);
  for (std::int64_t i = 0; i < out.numel(); ++i)
    out.ptr<std::int64_t>()[i] = x.view.ptr<std::int64_t>()[i] + a.weights[static_cast<std::size_t>(i % 12)].value * a.scale;
}
// An op of the tests only, not in the registry; its id is one no op uses.
constexpr OpDesc weighted_op{.id = static_cast<OpId>(op_id_limit - 3),
                             .name = "test_weighted",
                             .kind = OpKind::movement,
                             .arity = 1,
                             .infer = &weighted_infer,
                             .kernel = &weighted_kernel};

std::vector<std::int64_t> run_weighted(const Tensor& x, std::int64_t first, std::int64_t scale) {
  WeightedAttrs a{scale, {}};
  for (std::size_t k = 0; k < a.weights.size(); ++k) a.weights[k].value = first + static_cast<std::int64_t>(k);
  Tensor y = record(weighted_op, {x}, encode(a));
  sync();
  return y.to_vector<std::int64_t>();
}

TEST(OpAttrs, AnOpOfTwelveDataIntsReusesItsPlanForNewValues) {
  std::vector<std::int64_t> values(30);
  for (std::size_t k = 0; k < values.size(); ++k) values[k] = static_cast<std::int64_t>(k) * 100;
  Tensor x = from_vector(values, device());
  sync();
  std::vector<std::int64_t> first = run_weighted(x, 1, 2);
  const std::int64_t compiled = metrics::counter("UncachedCompile");
  for (std::int64_t start : {5, -40, 1000}) {
    std::vector<std::int64_t> got = run_weighted(x, start, 2);
    ASSERT_EQ(got.size(), values.size());
    for (std::size_t i = 0; i < values.size(); ++i)
      EXPECT_EQ(got[i], values[i] + (start + static_cast<std::int64_t>(i % 12)) * 2) << "element " << i;
  }
  EXPECT_EQ(metrics::counter("UncachedCompile"), compiled) << "new data words compiled nothing";
  run_weighted(x, 1, 3);
  EXPECT_EQ(metrics::counter("UncachedCompile"), compiled + 1) << "a new structural word is a new graph";
  EXPECT_EQ(first[13], values[13] + (1 + 1) * 2);
}

}  // namespace
}  // namespace lt
