// Files built byte for byte from the published format by tests/io/fixtures/make_fixtures.py,
// as the reference writer lays them out: they load with the right values, and lazytensor's
// writer makes the same bytes from the same tensors.
#include <bit>

#include "io_test_support.hpp"

namespace lt::io::testing {
namespace {

std::string fixture(const std::string& name) { return std::string(LT_IO_FIXTURES) + "/" + name; }

Tensor bf16_of_bits(const std::vector<std::uint16_t>& bits) {
  return tensor_of_bytes(DType::bf16, {static_cast<std::int64_t>(bits.size())}, le_bytes(bits));
}

/// The tensors of mixed.safetensors, made here.
TensorMap mixed() {
  return {{"weight", from_vector(std::vector<float>{0.5f, -1.0f, 2.25f, 3.0f, -0.125f, 1e-3f}, {2, 3})},
          {"bias", from_vector(std::vector<float>{1, 2, 3}, {3})},
          {"double", from_vector(std::vector<double>{3.141592653589793, -2.5}, {2})},
          {"steps", from_vector(std::vector<std::int64_t>{9007199254740993}, Shape{})},
          {"index", from_vector(std::vector<std::int32_t>{-1, 0, 7, 2147483647}, {2, 2})},
          {"half", bf16_of_bits({0x3F80, 0x4000, 0xBF00, 0x0000})},
          {"mask", from_vector(std::vector<bool>{true, false, true}, {3})},
          {"empty", zeros({0, 4})}};
}

void expect_mixed(const TensorMap& loaded) {
  TensorMap expected = mixed();
  ASSERT_EQ(loaded.size(), expected.size());
  for (auto& [name, t] : expected) {
    ASSERT_TRUE(loaded.contains(name)) << name;
    EXPECT_EQ(loaded.at(name).dtype(), t.dtype()) << name;
    EXPECT_EQ(loaded.at(name).shape(), t.shape()) << name;
    EXPECT_EQ(raw_bytes(loaded.at(name)), raw_bytes(t)) << name;
  }
  EXPECT_EQ(loaded.at("steps").item<std::int64_t>(), 9007199254740993);
  EXPECT_EQ(loaded.at("index").to_vector<std::int32_t>(), (std::vector<std::int32_t>{-1, 0, 7, 2147483647}));
}

TEST(ReferenceFixtures, TheReferenceSerializationExample) {
  TensorMap loaded = load(fixture("attn.safetensors"));
  ASSERT_EQ(loaded.size(), 1u);
  EXPECT_EQ(loaded.at("attn.0").shape(), Shape({1, 2, 3}));
  EXPECT_EQ(loaded.at("attn.0").to_vector<float>(), (std::vector<float>{0, 1, 2, 3, 4, 5}));
}

TEST(ReferenceFixtures, MixedDtypesLoadWithTheirValues) {
  SafetensorsContents file = load_with_metadata(fixture("mixed.safetensors"));
  expect_mixed(file.tensors);
  EXPECT_EQ(file.metadata, (Metadata{{"format", "pt"}}));
}

TEST(ReferenceFixtures, DataInNameOrderLoadsToo) { expect_mixed(load(fixture("mixed_name_order.safetensors"))); }

TEST(ReferenceFixtures, EmptyWithMetadata) {
  SafetensorsContents file = load_with_metadata(fixture("empty_with_metadata.safetensors"));
  EXPECT_TRUE(file.tensors.empty());
  EXPECT_EQ(file.metadata, (Metadata{{"framework", "pt"}}));
}

TEST(ReferenceFixtures, TheWriterMakesTheReferenceBytes) {
  ScratchDir dir;
  save({{"attn.0", from_vector(std::vector<float>{0, 1, 2, 3, 4, 5}, {1, 2, 3})}}, dir / "attn.safetensors");
  EXPECT_EQ(read_bytes(dir / "attn.safetensors"), read_bytes(fixture("attn.safetensors")));
  save({}, dir / "empty.safetensors", {{"framework", "pt"}});
  EXPECT_EQ(read_bytes(dir / "empty.safetensors"), read_bytes(fixture("empty_with_metadata.safetensors")));
  save(mixed(), dir / "mixed.safetensors", {{"format", "pt"}});
  EXPECT_EQ(read_bytes(dir / "mixed.safetensors"), read_bytes(fixture("mixed.safetensors")));
}

}  // namespace
}  // namespace lt::io::testing
