// safetensors files written and read back: every dtype, ranks 0 to 8, empty, non-contiguous
// and lazy tensors, metadata, loading onto a lazy device and viewing the mapped file.
#include "io_test_support.hpp"

namespace lt::io::testing {
namespace {

const DType all_dtypes[] = {DType::f32, DType::f64, DType::bf16, DType::f16, DType::i32, DType::i64, DType::boolean};

void expect_same(const TensorMap& expected, const TensorMap& actual) {
  ASSERT_EQ(expected.size(), actual.size());
  for (auto& [name, t] : expected) {
    auto it = actual.find(name);
    ASSERT_NE(it, actual.end()) << name;
    EXPECT_EQ(it->second.dtype(), t.dtype()) << name;
    EXPECT_EQ(it->second.shape(), t.shape()) << name;
    EXPECT_EQ(raw_bytes(it->second), raw_bytes(t)) << name;
  }
}

TEST(SafetensorsRoundTrip, EveryDtypeAndRankZeroToEight) {
  ScratchDir dir;
  TensorMap tensors;
  unsigned seed = 0;
  for (DType t : all_dtypes) {
    Shape shape;
    for (int rank = 0; rank <= max_rank; ++rank) {
      tensors.emplace(std::string(name(t)) + ".rank" + std::to_string(rank), patterned(t, shape, ++seed));
      if (rank < max_rank) shape.push_back(rank % 3 + 1);
    }
  }
  save(tensors, dir / "all.safetensors");
  expect_same(tensors, load(dir / "all.safetensors"));
}

TEST(SafetensorsRoundTrip, EmptyTensorsAndAnEmptyMap) {
  ScratchDir dir;
  TensorMap tensors{{"empty", patterned(DType::f32, {0}, 1)},
                    {"empty_inner", patterned(DType::i64, {3, 0, 2}, 2)},
                    {"scalar", patterned(DType::f64, {}, 3)},
                    {"after", patterned(DType::f32, {2}, 4)}};
  save(tensors, dir / "empty.safetensors");
  expect_same(tensors, load(dir / "empty.safetensors"));

  save({}, dir / "none.safetensors");
  EXPECT_TRUE(load(dir / "none.safetensors").empty());
  // The reference writer's bytes for an empty map: "{}" padded to 8.
  EXPECT_EQ(read_bytes(dir / "none.safetensors"), safetensors_bytes("{}      ", {}));
}

TEST(SafetensorsRoundTrip, NonContiguousTensorsAreWrittenInRowMajorOrder) {
  ScratchDir dir;
  Tensor base = arange(0, 24, 1, cpu, f32).reshape({2, 3, 4});
  TensorMap tensors{{"transposed", base.transpose(0, 2)},
                    {"stepped", base.slice(2, 0, 4, 2)},
                    {"expanded", lt::ones({1, 3}, cpu, i64).expand({4, 3})},
                    {"selected", base.select(1, 1)},
                    {"flipped", base.flip({1})}};
  save(tensors, dir / "views.safetensors");
  TensorMap loaded = load(dir / "views.safetensors");
  expect_same(tensors, loaded);
  EXPECT_EQ(loaded.at("transposed").to_vector<float>(), tensors.at("transposed").contiguous().to_vector<float>());
}

TEST(SafetensorsRoundTrip, LazyTensorsArePutInOneBarrier) {
  ScratchDir dir;
  Device dev = device();
  Tensor a = randn({16, 8}, dev);
  Tensor b = Tensor(a * 2.0f + 1.0f).sum({1});
  Tensor c = a.t();  // a view of a lazy value
  auto steps = metrics::counter("MarkStep");
  save({{"a", a}, {"b", b}, {"c", c}}, dir / "lazy.safetensors");
  EXPECT_EQ(metrics::counter("MarkStep"), steps + 1);
  TensorMap loaded = load(dir / "lazy.safetensors");
  EXPECT_EQ(loaded.at("a").to_vector<float>(), a.to_vector<float>());
  EXPECT_EQ(loaded.at("b").to_vector<float>(), b.to_vector<float>());
  EXPECT_EQ(raw_bytes(loaded.at("c")), raw_bytes(c));
}

TEST(SafetensorsRoundTrip, LoadsOntoALazyDevice) {
  ScratchDir dir;
  TensorMap tensors{{"w", patterned(DType::f32, {4, 5}, 1)}, {"n", patterned(DType::i64, {3}, 2)}};
  save(tensors, dir / "w.safetensors");
  TensorMap loaded = load(dir / "w.safetensors", device());
  for (auto& [name, t] : loaded) EXPECT_EQ(t.device(), device()) << name;
  Tensor doubled = loaded.at("w") * 2.0f;
  EXPECT_EQ(doubled.to_vector<float>(), (tensors.at("w") * 2.0f).to_vector<float>());
  expect_same(tensors, loaded);
}

TEST(SafetensorsRoundTrip, MetadataComesBack) {
  ScratchDir dir;
  Metadata metadata{{"format", "pt"}, {"note", "line\nbreak, \"quotes\" and \xc3\xa9"}, {"", "empty key"}};
  save({{"x", patterned(DType::f32, {2}, 1)}}, dir / "m.safetensors", metadata);
  EXPECT_EQ(load_metadata(dir / "m.safetensors"), metadata);
  EXPECT_EQ(load_with_metadata(dir / "m.safetensors").metadata, metadata);
}

TEST(SafetensorsRoundTrip, MappedTensorsViewTheFileWithoutChangingIt) {
  ScratchDir dir;
  TensorMap tensors{{"a", patterned(DType::f32, {64, 3}, 1)}, {"b", patterned(DType::bf16, {7}, 2)},
                    {"c", patterned(DType::boolean, {9}, 3)}};
  save(tensors, dir / "v.safetensors");
  Bytes before = read_bytes(dir / "v.safetensors");
  {
    TensorMap mapped = load(dir / "v.safetensors", cpu, {.mmap = true});
    expect_same(tensors, mapped);
    Array a = materialize(mapped.at("a"));
    // The view points into the mapping: its bytes sit where the file holds them.
    std::uint64_t header = 0;
    std::memcpy(&header, before.data(), 8);
    EXPECT_EQ(std::memcmp(a.view.data, before.data() + 8 + header, 4), 0);
    mapped.at("a") += 1.0f;  // private pages: the tensor changes, the file does not
    EXPECT_EQ(mapped.at("a").to_vector<float>(), (tensors.at("a") + 1.0f).to_vector<float>());
  }
  EXPECT_EQ(read_bytes(dir / "v.safetensors"), before);
}

TEST(SafetensorsRoundTrip, ReplacesAnExistingFile) {
  ScratchDir dir;
  save({{"old", patterned(DType::f32, {1000}, 1)}}, dir / "f.safetensors");
  save({{"new", patterned(DType::i32, {3}, 2)}}, dir / "f.safetensors");
  TensorMap loaded = load(dir / "f.safetensors");
  ASSERT_EQ(loaded.size(), 1u);
  EXPECT_TRUE(loaded.contains("new"));
  // No temporary file is left beside it.
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir.path()), {}), 1);
}

TEST(SafetensorsRoundTrip, ModuleStateDictThroughLoadInto) {
  ScratchDir dir;
  manual_seed(3);
  nn::Linear source(5, 4);
  nn::Linear target(5, 4);
  save(source.state_dict(), dir / "linear.safetensors");
  load_into(target, dir / "linear.safetensors");
  EXPECT_EQ(target.state_dict().at("weight").to_vector<float>(), source.state_dict().at("weight").to_vector<float>());
  EXPECT_EQ(target.state_dict().at("bias").to_vector<float>(), source.state_dict().at("bias").to_vector<float>());
}

}  // namespace
}  // namespace lt::io::testing
