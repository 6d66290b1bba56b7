// Every fault the loader must refuse, each in a file made by hand, and the saver's failures:
// each raises lt::Error naming the file and the fault, loads nothing into a module and leaves
// an old file as it was.
#include <signal.h>
#include <sys/resource.h>

#include "io_test_support.hpp"

namespace lt::io::testing {
namespace {

const std::string f32x2 = R"({"dtype":"F32","shape":[2],"data_offsets":[0,8]})";

/// Writes a file of `header` (padded) and `data` and expects loading it to fail with `fault`.
void expect_refused(const std::string& header, const Bytes& data, const std::string& fault) {
  ScratchDir dir;
  write_bytes(dir / "bad.safetensors", safetensors_bytes(padded(header), data));
  expect_load_error(dir / "bad.safetensors", fault);
}

TEST(BadInput, FileShorterThanTheHeaderLength) {
  ScratchDir dir;
  write_bytes(dir / "short.safetensors", {8, 0, 0});
  expect_load_error(dir / "short.safetensors", "fewer than the 8 of the header length");
}

TEST(BadInput, HeaderLengthPastTheFile) {
  ScratchDir dir;
  Bytes bytes = safetensors_bytes(padded("{}"), {});
  bytes[0] = 200;
  write_bytes(dir / "past.safetensors", bytes);
  expect_load_error(dir / "past.safetensors", "runs past the end of the file");
}

TEST(BadInput, HeaderLengthBeyondTheLimit) {
  ScratchDir dir;
  Bytes bytes = safetensors_bytes(padded("{}"), {});
  bytes[7] = 0x80;  // 2^63: would overflow 8 + n
  write_bytes(dir / "huge.safetensors", bytes);
  expect_load_error(dir / "huge.safetensors", "exceeds the format's limit");
}

TEST(BadInput, HeaderThatIsNotJson) { expect_refused(R"({"a": {"dtype":)", {}, "not valid JSON"); }

TEST(BadInput, HeaderThatIsNotUtf8) { expect_refused("{\"\xff\xfe\":{}}", {}, "not valid JSON"); }

TEST(BadInput, HeaderThatIsNotAnObject) { expect_refused("[1, 2]", {}, "must be a JSON object"); }

TEST(BadInput, UnknownDtype) {
  expect_refused(R"({"a":{"dtype":"F31","shape":[2],"data_offsets":[0,8]}})", Bytes(8), "unknown dtype 'F31'");
}

TEST(BadInput, DtypeLazytensorDoesNotHold) {
  expect_refused(R"({"a":{"dtype":"U16","shape":[2],"data_offsets":[0,4]}})", Bytes(4),
                 "has dtype U16, which lazytensor does not hold");
}

TEST(BadInput, ElementCountOverflows) {
  expect_refused(R"({"a":{"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,8]}})", Bytes(8),
                 "element count of shape [4294967296,4294967296] overflows");
}

TEST(BadInput, ByteCountOverflows) {
  expect_refused(R"({"a":{"dtype":"F64","shape":[4611686018427387904],"data_offsets":[0,8]}})", Bytes(8),
                 "byte count of shape [4611686018427387904] overflows");
}

TEST(BadInput, NegativeExtent) {
  expect_refused(R"({"a":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}})", Bytes(8), "non-negative integers");
}

TEST(BadInput, RankAboveEight) {
  expect_refused(R"({"a":{"dtype":"F32","shape":[1,1,1,1,1,1,1,1,2],"data_offsets":[0,8]}})", Bytes(8), "rank 9");
}

TEST(BadInput, OffsetsThatOverlap) {
  expect_refused(R"({"a":)" + f32x2 + R"(,"b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})", Bytes(12),
                 "'a' [0, 8] and 'b' [4, 12] overlap");
}

TEST(BadInput, OffsetsThatLeaveAGap) {
  expect_refused(R"({"a":)" + f32x2 + R"(,"b":{"dtype":"F32","shape":[2],"data_offsets":[12,20]}})", Bytes(20),
                 "gap of 4 bytes before tensor 'b'");
}

TEST(BadInput, OffsetsThatDoNotStartAtZero) {
  expect_refused(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})", Bytes(12), "gap of 4 bytes");
}

TEST(BadInput, OffsetsPastTheData) {
  expect_refused(R"({"a":)" + f32x2 + "}", Bytes(4), "run past the data section (4 bytes");
}

TEST(BadInput, OffsetsThatDisagreeWithTheShape) {
  expect_refused(R"({"a":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})", Bytes(8),
                 "hold 8 bytes, but F32 [3] needs 12");
}

TEST(BadInput, OffsetsThatEndBeforeTheyBegin) {
  expect_refused(R"({"a":{"dtype":"F32","shape":[0],"data_offsets":[8,0]}})", Bytes(8), "end before they begin");
}

TEST(BadInput, OffsetsThatAreNotAPair) {
  expect_refused(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8,8]}})", Bytes(8), "must be [begin, end]");
}

TEST(BadInput, DuplicateNames) {
  expect_refused(R"({"a":)" + f32x2 + R"(,"a":{"dtype":"F32","shape":[2],"data_offsets":[8,16]}})", Bytes(16),
                 "the key 'a' appears twice (a duplicate tensor name)");
}

TEST(BadInput, DuplicateFieldsOfATensor) {
  expect_refused(R"({"a":{"dtype":"F32","dtype":"I32","shape":[2],"data_offsets":[0,8]}})", Bytes(8),
                 "the key 'dtype' appears twice");
}

TEST(BadInput, MissingAndUnknownFields) {
  expect_refused(R"({"a":{"dtype":"F32","data_offsets":[0,8]}})", Bytes(8), "has no \"shape\"");
  expect_refused(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8],"strides":[1]}})", Bytes(8),
                 "unknown field 'strides'");
}

TEST(BadInput, MetadataThatIsNotStrings) {
  expect_refused(R"({"__metadata__":{"epoch":3}})", {}, "__metadata__ value of 'epoch' must be a string");
  expect_refused(R"({"__metadata__":["x"]})", {}, "__metadata__ must be an object of strings");
}

TEST(BadInput, NestingDeeperThanAHeader) {
  expect_refused(R"({"a":{"dtype":"F32","shape":[[[2]]],"data_offsets":[0,8]}})", Bytes(8), "nest deeper");
}

TEST(BadInput, TruncatedFile) {
  ScratchDir dir;
  save({{"a", patterned(DType::f32, {100}, 1)}, {"b", patterned(DType::i64, {10}, 2)}}, dir / "whole.safetensors");
  Bytes bytes = read_bytes(dir / "whole.safetensors");
  bytes.resize(bytes.size() - 3);
  write_bytes(dir / "cut.safetensors", bytes);
  expect_load_error(dir / "cut.safetensors", "run past the data section");
}

TEST(BadInput, TrailingBytesAfterTheLastTensor) {
  expect_refused(R"({"a":)" + f32x2 + "}", Bytes(9), "trailing bytes");
}

TEST(BadInput, BooleansOtherThanZeroOrOne) {
  expect_refused(R"({"m":{"dtype":"BOOL","shape":[3],"data_offsets":[0,3]}})", {1, 0, 2},
                 "holds the byte 2 at element 2");
}

TEST(BadInput, MissingFileAndDirectory) {
  ScratchDir dir;
  expect_load_error(dir / "absent.safetensors", "cannot open");
  expect_load_error(dir.path().string(), "not a regular file");
}

TEST(BadInput, NothingIsHalfLoadedIntoAModule) {
  ScratchDir dir;
  manual_seed(4);
  nn::Linear source(3, 2), target(3, 2);
  Bytes weight = raw_bytes(target.weight), bias = raw_bytes(target.bias);
  save(source.state_dict(), dir / "good.safetensors");
  Bytes bytes = read_bytes(dir / "good.safetensors");

  // The second tensor's bytes cut short: the first would load, the file is refused whole.
  bytes.resize(bytes.size() - 1);
  write_bytes(dir / "cut.safetensors", bytes);
  EXPECT_THROW(load_into(target, dir / "cut.safetensors"), Error);
  // A file whose names do not match the module.
  save({{"weight", patterned(DType::f32, {2, 3}, 1)}}, dir / "partial.safetensors");
  try {
    load_into(target, dir / "partial.safetensors");
    ADD_FAILURE() << "a file without the bias loaded";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("missing keys: bias"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(dir / "partial.safetensors"), std::string::npos) << e.what();
  }
  EXPECT_EQ(raw_bytes(target.weight), weight);
  EXPECT_EQ(raw_bytes(target.bias), bias);
}

TEST(BadSave, UnwritablePathsLeaveTheOldFile) {
  ScratchDir dir;
  try {
    save({{"a", patterned(DType::f32, {2}, 1)}}, dir / "no_such_dir/x.safetensors");
    ADD_FAILURE() << "saved into a missing directory";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(dir / "no_such_dir/x.safetensors"), std::string::npos) << e.what();
  }
  std::filesystem::create_directory(dir / "taken");
  EXPECT_THROW(save({{"a", patterned(DType::f32, {2}, 1)}}, dir / "taken"), Error);
  EXPECT_TRUE(std::filesystem::is_directory(dir / "taken"));
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir.path()), {}), 1);  // no temporary left
}

TEST(BadSave, BadNamesAndUndefinedTensorsWriteNothing) {
  ScratchDir dir;
  EXPECT_THROW(save({{"__metadata__", patterned(DType::f32, {2}, 1)}}, dir / "a.safetensors"), Error);
  EXPECT_THROW(save({{"\xff", patterned(DType::f32, {2}, 1)}}, dir / "a.safetensors"), Error);
  EXPECT_THROW(save({{"u", Tensor()}}, dir / "a.safetensors"), Error);
  EXPECT_THROW(save({}, dir / "a.safetensors", {{"k", "\xc3"}}), Error);
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir.path()), {}), 0);
}

TEST(BadSave, AFullDiskLeavesTheOldFile) {
  // A file-size limit fails write() as a full disk does (EFBIG rather than ENOSPC).
  ScratchDir dir;
  TensorMap old{{"old", patterned(DType::f32, {1000}, 1)}};
  save(old, dir / "f.safetensors");
  Bytes before = read_bytes(dir / "f.safetensors");
  struct sigaction ignore {}, previous {};
  ignore.sa_handler = SIG_IGN;
  sigaction(SIGXFSZ, &ignore, &previous);
  rlimit limit{}, saved{};
  getrlimit(RLIMIT_FSIZE, &saved);
  limit = saved;
  limit.rlim_cur = 1 << 20;
  setrlimit(RLIMIT_FSIZE, &limit);
  try {
    save({{"big", zeros({1 << 19})}}, dir / "f.safetensors");  // 2 MiB
    ADD_FAILURE() << "a write past the limit succeeded";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("write failed"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("the old file is left as it was"), std::string::npos) << e.what();
  }
  setrlimit(RLIMIT_FSIZE, &saved);
  sigaction(SIGXFSZ, &previous, nullptr);
  EXPECT_EQ(read_bytes(dir / "f.safetensors"), before);
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir.path()), {}), 1);
}

}  // namespace
}  // namespace lt::io::testing
