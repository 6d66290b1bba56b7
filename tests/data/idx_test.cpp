// The IDX reader on files the test writes, plain and gzip-compressed: values, shapes and
// dtypes come out right, and every kind of bad file raises lt::Error naming the file and
// the fault.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "data_helpers.hpp"

namespace lt::data {
namespace {

using testing::Bytes;
using testing::idx_bytes;
using testing::ScratchDir;

/// The lt::Error message of reading `path` with `read`, or a failure if none is raised.
template <class Read>
std::string error_reading(Read read, const std::filesystem::path& path) {
  try {
    read(path);
  } catch (const Error& e) {
    std::string what = e.what();
    EXPECT_NE(what.find(path.filename().string()), std::string::npos) << "names the file: " << what;
    return what;
  }
  ADD_FAILURE() << "no lt::Error reading " << path;
  return {};
}

Bytes pixels(std::size_t n) {
  Bytes b(n);
  for (std::size_t i = 0; i < n; ++i) b[i] = static_cast<std::uint8_t>(i * 37 % 256);
  return b;
}

TEST(Idx, ReadsImagesAndLabels) {
  ScratchDir dir;
  const Bytes image_data = pixels(3 * 4 * 5);
  testing::write_file(dir / "images", idx_bytes(0x08, {3, 4, 5}, image_data));
  testing::write_file(dir / "labels", idx_bytes(0x08, {3}, {7, 0, 9}));

  Tensor images = read_idx_images(dir / "images");
  EXPECT_EQ(images.shape(), (Shape{3, 1, 4, 5}));
  EXPECT_EQ(images.dtype(), f32);
  std::vector<float> want;
  for (std::uint8_t p : image_data) want.push_back(static_cast<float>(p) / 255.0f);
  EXPECT_EQ(images.to_vector<float>(), want);

  Tensor labels = read_idx_labels(dir / "labels");
  EXPECT_EQ(labels.shape(), (Shape{3}));
  EXPECT_EQ(labels.dtype(), i64);
  EXPECT_EQ(labels.to_vector<std::int64_t>(), (std::vector<std::int64_t>{7, 0, 9}));
}

TEST(Idx, ReadsGzipFilesOfTheGzipProgramAndStoredBlocks) {
  ScratchDir dir;
  const Bytes file = idx_bytes(0x08, {20, 28, 28}, pixels(20 * 28 * 28));
  testing::write_file(dir / "plain", file);
  testing::write_file(dir / "compressed.gz", testing::gzip_program(file, 9, dir));
  testing::write_file(dir / "stored.gz", testing::StoredGzip{.block = 4096}(file));
  const auto want = read_idx_images(dir / "plain").to_vector<float>();
  EXPECT_EQ(read_idx_images(dir / "compressed.gz").to_vector<float>(), want);
  EXPECT_EQ(read_idx_images(dir / "stored.gz").to_vector<float>(), want);
}

TEST(Idx, EveryElementType) {
  // Big-endian elements of each type, read back exactly.
  const Bytes i8_bytes = {0xFF, 0x80, 0x7F};
  const Bytes i16_bytes = {0xFF, 0xFE, 0x01, 0x00};
  const Bytes i32_bytes = {0x80, 0, 0, 0, 0, 0, 0x01, 0x02};
  const std::uint32_t f = std::bit_cast<std::uint32_t>(-1.5f);
  const Bytes f32_bytes = {std::uint8_t(f >> 24), std::uint8_t(f >> 16), std::uint8_t(f >> 8), std::uint8_t(f)};
  const std::uint64_t d = std::bit_cast<std::uint64_t>(0.1);
  Bytes f64_bytes;
  for (int k = 7; k >= 0; --k) f64_bytes.push_back(static_cast<std::uint8_t>(d >> (8 * k)));

  EXPECT_EQ(to_tensor(IdxArray::parse(idx_bytes(0x09, {3}, i8_bytes)), i64).to_vector<std::int64_t>(),
            (std::vector<std::int64_t>{-1, -128, 127}));
  EXPECT_EQ(to_tensor(IdxArray::parse(idx_bytes(0x0B, {2}, i16_bytes)), i32).to_vector<std::int32_t>(),
            (std::vector<std::int32_t>{-2, 256}));
  EXPECT_EQ(to_tensor(IdxArray::parse(idx_bytes(0x0C, {2, 1}, i32_bytes)), i64).to_vector<std::int64_t>(),
            (std::vector<std::int64_t>{-2147483648LL, 258}));
  EXPECT_EQ(to_tensor(IdxArray::parse(idx_bytes(0x0D, {1}, f32_bytes)), f32).item<float>(), -1.5f);
  EXPECT_EQ(to_tensor(IdxArray::parse(idx_bytes(0x0E, {1}, f64_bytes)), f64).item<double>(), 0.1);
  IdxArray a = IdxArray::parse(idx_bytes(0x08, {2, 0, 3}, {}));
  EXPECT_EQ(a.count(), 0);
  EXPECT_EQ(to_tensor(a, f32).shape(), (Shape{2, 0, 3}));
}

TEST(Idx, BadFilesRaiseNamingTheFileAndTheFault) {
  ScratchDir dir;
  auto write = [&](const std::string& name, const Bytes& bytes) {
    testing::write_file(dir / name, bytes);
    return dir / name;
  };
  auto expect_fault = [&](const std::filesystem::path& path, const std::string& fault) {
    std::string what = error_reading([](const auto& p) { read_idx_images(p); }, path);
    EXPECT_NE(what.find(fault), std::string::npos) << "expected '" << fault << "' in: " << what;
  };
  const Bytes good = idx_bytes(0x08, {2, 3, 3}, pixels(18));

  expect_fault(dir / "missing", "no such file");
  expect_fault(dir.path(), "not a regular file");
  expect_fault(write("empty", {}), "too few");
  expect_fault(write("magic", [&] { Bytes b = good; b[0] = 1; return b; }()), "bad magic number");
  expect_fault(write("type", [&] { Bytes b = good; b[2] = 0x0A; return b; }()), "unknown element type");
  expect_fault(write("no_dims", idx_bytes(0x08, {}, {})), "gives 0 dims");
  expect_fault(write("many_dims", [&] { Bytes b = good; b[3] = 9; return b; }()), "gives 9 dims");
  expect_fault(write("short_header", Bytes(good.begin(), good.begin() + 10)), "header of 3 dims needs 16 bytes");
  expect_fault(write("truncated", Bytes(good.begin(), good.end() - 1)), "truncated");
  expect_fault(write("long", [&] { Bytes b = good; b.push_back(0); return b; }()), "1 bytes follow the last element");
  expect_fault(write("huge", idx_bytes(0x08, {0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF}, pixels(18))), "truncated");
  expect_fault(write("labels_as_images", idx_bytes(0x08, {4}, {1, 2, 3, 4})), "expected u8 images");
  expect_fault(write("i32_images", idx_bytes(0x0C, {1, 1, 1}, {0, 0, 0, 1})), "expected u8 images");
  std::string what = error_reading([](const auto& p) { read_idx_labels(p); }, write("images_as_labels", good));
  EXPECT_NE(what.find("expected u8 labels"), std::string::npos) << what;

  // Compressed files: the gzip layer's faults, named with the file too.
  ScratchDir scratch;
  Bytes gz = testing::gzip_program(good, 9, scratch);
  expect_fault(write("cut.gz", Bytes(gz.begin(), gz.end() - 5)), "truncated");
  Bytes bad_crc = gz;
  bad_crc[bad_crc.size() - 6] ^= 0x10;
  expect_fault(write("crc.gz", bad_crc), "CRC-32 mismatch");
  Bytes garbage = gz;
  garbage.push_back('x');
  expect_fault(write("garbage.gz", garbage), "trailing garbage");
  // Sound gzip around a bad IDX payload.
  expect_fault(write("inner.gz", testing::StoredGzip{}(Bytes(good.begin(), good.end() - 3))), "truncated");
}

TEST(Idx, AZeroExtentBesideHugeOnesIsRefusedNotWrapped) {
  // No element, but strides over [0, 2^32 - 1, 2^32 - 1] would overflow 64 bits.
  try {
    IdxArray::parse(idx_bytes(0x08, {0, 0xFFFFFFFF, 0xFFFFFFFF}, {}));
    ADD_FAILURE() << "parsed";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("overflows"), std::string::npos) << e.what();
  }
  EXPECT_EQ(IdxArray::parse(idx_bytes(0x08, {0, 0xFFFFFFFF}, {})).count(), 0);  // fits: read
}

TEST(Idx, FloatsWithoutAnIntegerRaiseWhenReadAsIntegers) {
  auto f32_file = [](float v) {
    const std::uint32_t f = std::bit_cast<std::uint32_t>(v);
    return idx_bytes(0x0D, {1}, {std::uint8_t(f >> 24), std::uint8_t(f >> 16), std::uint8_t(f >> 8), std::uint8_t(f)});
  };
  for (float v : {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(), -1e30f}) {
    IdxArray a = IdxArray::parse(f32_file(v));
    EXPECT_THROW(to_tensor(a, i64), Error) << v;
    EXPECT_THROW(to_tensor(a, i32), Error) << v;
  }
  EXPECT_THROW(to_tensor(IdxArray::parse(f32_file(3e9f)), i32), Error);
  EXPECT_EQ(to_tensor(IdxArray::parse(f32_file(3e9f)), i64).item<std::int64_t>(), 3000000000LL);
  EXPECT_EQ(to_tensor(IdxArray::parse(f32_file(-2.75f)), i32).item<std::int32_t>(), -2);  // truncated, as a cast
  EXPECT_TRUE(std::isnan(to_tensor(IdxArray::parse(f32_file(std::numeric_limits<float>::quiet_NaN())), f32).item<float>()));
}

}  // namespace
}  // namespace lt::data
