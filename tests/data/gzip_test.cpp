// CRC-32, inflate and gunzip: streams the gzip program writes (fixed and dynamic Huffman
// blocks, levels 1 and 9), stored blocks with every header field, several members, and every
// kind of damage a file can carry, which must raise lt::Error and never crash.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "data_helpers.hpp"

namespace lt::data {
namespace {

using testing::Bytes;
using testing::ScratchDir;
using testing::StoredGzip;

Bytes text(const std::string& s) { return Bytes(s.begin(), s.end()); }

/// The lt::Error message of `f`, or a failure if it does not raise one.
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "no lt::Error";
  return {};
}

TEST(Crc32, KnownValues) {
  EXPECT_EQ(crc32(text("")), 0u);
  EXPECT_EQ(crc32(text("123456789")), 0xCBF43926u);
  EXPECT_EQ(crc32(text("The quick brown fox jumps over the lazy dog")), 0x414FA339u);
  // Continuing a CRC over pieces equals one CRC over the whole, at any split.
  Bytes all = testing::random_bytes(1000, 3);
  for (std::size_t split : {0u, 1u, 7u, 8u, 9u, 500u, 1000u})
    EXPECT_EQ(crc32(std::span(all).subspan(split), crc32(std::span(all).first(split))), crc32(all));
}

TEST(Gunzip, StreamsOfTheGzipProgram) {
  ScratchDir dir;
  const std::vector<Bytes> inputs = {text("hello, hello, hello lazy tensor"),  // fixed Huffman codes
                                     Bytes{},
                                     Bytes(100000, 'a'),  // long overlapping matches
                                     testing::compressible_text(300000, 1),  // dynamic codes, many blocks
                                     testing::random_bytes(70000, 2)};     // stored blocks
  for (const Bytes& input : inputs)
    for (int level : {1, 6, 9}) {
      Bytes gz = testing::gzip_program(input, level, dir);
      ASSERT_TRUE(is_gzip(gz));
      EXPECT_EQ(gunzip(gz), input) << input.size() << " bytes at level " << level;
    }
}

TEST(Gunzip, StoredBlocksWithEveryHeaderField) {
  const Bytes data = testing::compressible_text(200000, 4);
  StoredGzip plain;
  EXPECT_EQ(gunzip(plain(data)), data);
  StoredGzip full{.name = "images.idx", .comment = "made by the test", .extra = {'A', 'B', 2, 0, 7, 9}, .header_crc = true, .block = 1000};
  EXPECT_EQ(gunzip(full(data)), data);
  EXPECT_EQ(gunzip(StoredGzip{}(Bytes{})), Bytes{});
}

TEST(Gunzip, SeveralMembersFollowOneAnother) {
  ScratchDir dir;
  const Bytes a = text("first member; "), b = testing::compressible_text(5000, 5);
  Bytes both = testing::gzip_program(a, 9, dir);
  Bytes second = StoredGzip{}(b);
  both.insert(both.end(), second.begin(), second.end());
  Bytes want = a;
  want.insert(want.end(), b.begin(), b.end());
  EXPECT_EQ(gunzip(both), want);
}

TEST(Gunzip, DamagedHeadersAndTrailers) {
  const Bytes data = text("some data to protect");
  const Bytes good = StoredGzip{.name = "x"}(data);
  auto with = [&](std::size_t at, std::uint8_t value) {
    Bytes b = good;
    b[at] = value;
    return b;
  };
  EXPECT_NE(error_of([&] { gunzip(Bytes{}); }).find("truncated"), std::string::npos);
  EXPECT_NE(error_of([&] { gunzip(with(1, 0x8c)); }).find("magic"), std::string::npos);
  EXPECT_NE(error_of([&] { gunzip(with(2, 7)); }).find("not deflate"), std::string::npos);
  EXPECT_NE(error_of([&] { gunzip(with(3, good[3] | 0x20)); }).find("reserved"), std::string::npos);
  Bytes bad_crc = good;
  bad_crc[bad_crc.size() - 8] ^= 1;
  EXPECT_NE(error_of([&] { gunzip(bad_crc); }).find("CRC-32 mismatch"), std::string::npos);
  Bytes bad_size = good;
  bad_size[bad_size.size() - 4] ^= 1;
  EXPECT_NE(error_of([&] { gunzip(bad_size); }).find("length mismatch"), std::string::npos);
  Bytes bad_data = good;
  bad_data[bad_data.size() - 10] ^= 1;  // a byte of the stored data
  EXPECT_NE(error_of([&] { gunzip(bad_data); }).find("CRC-32 mismatch"), std::string::npos);
  Bytes hcrc = StoredGzip{.header_crc = true}(data);
  hcrc[10] ^= 1;  // the header CRC itself
  EXPECT_NE(error_of([&] { gunzip(hcrc); }).find("header CRC"), std::string::npos);
  Bytes trailing = good;
  trailing.push_back(0);
  EXPECT_NE(error_of([&] { gunzip(trailing); }).find("truncated"), std::string::npos);
  Bytes unterminated = {0x1f, 0x8b, 8, 8, 0, 0, 0, 0, 0, 3, 'a', 'b'};
  EXPECT_NE(error_of([&] { gunzip(unterminated); }).find("unterminated"), std::string::npos);
}

TEST(Gunzip, OutputBeyondTheLimitRaises) {
  ScratchDir dir;
  const Bytes zeros(1 << 20, 0);  // a megabyte of zeros compresses about a thousandfold
  const Bytes gz = testing::gzip_program(zeros, 9, dir);
  EXPECT_EQ(gunzip(gz, zeros.size()), zeros) << "exactly at the limit";
  EXPECT_NE(error_of([&] { gunzip(gz, zeros.size() - 1); }).find("exceeds the limit"), std::string::npos);
  EXPECT_NE(error_of([&] { gunzip(StoredGzip{}(zeros), 1000); }).find("exceeds the limit"), std::string::npos);
}

TEST(Gunzip, EveryTruncationRaises) {
  ScratchDir dir;
  const Bytes gz = testing::gzip_program(testing::compressible_text(3000, 6), 9, dir);
  for (std::size_t n = 0; n < gz.size(); ++n)
    EXPECT_THROW(gunzip(std::span(gz).first(n)), Error) << "cut at " << n << " of " << gz.size();
}

TEST(Gunzip, EveryCorruptedByteRaises) {
  ScratchDir dir;
  const Bytes input = testing::compressible_text(3000, 7);
  const Bytes gz = testing::gzip_program(input, 9, dir);
  // Bytes 4 to 9 (time, extra flags, system) are informational; the rest all matter.
  for (std::size_t at = 0; at < gz.size(); ++at) {
    if (at >= 4 && at < 10) continue;
    Bytes bad = gz;
    bad[at] ^= 0xFF;
    EXPECT_THROW(gunzip(bad), Error) << "byte " << at << " of " << gz.size();
  }
}

TEST(Inflate, BadStreamsRaiseWithAReason) {
  EXPECT_NE(error_of([] { inflate(Bytes{0x07}); }).find("block type 3"), std::string::npos);
  // A stored block whose length and complement disagree.
  EXPECT_NE(error_of([] { inflate(Bytes{0x01, 0x05, 0x00, 0x00, 0x00}); }).find("complement"), std::string::npos);
  // Fixed codes: a match at distance 1 with nothing written yet. 0x03 = BFINAL, fixed; then
  // length symbol 257 (code 0000001) and distance code 0.
  EXPECT_NE(error_of([] { inflate(Bytes{0x03, 0x02, 0x00}); }).find("before the start"), std::string::npos);
  EXPECT_NE(error_of([] { inflate(Bytes{}); }).find("truncated"), std::string::npos);
  // A valid stream followed by extra bytes.
  Bytes stored = {0x01, 0x01, 0x00, 0xFE, 0xFF, 'x'};
  EXPECT_EQ(inflate(stored), Bytes{'x'});
  stored.push_back(0);
  EXPECT_NE(error_of([&] { inflate(stored); }).find("follow the end"), std::string::npos);
}

TEST(Inflate, RandomInputNeverCrashes) {
  // Whatever the bytes, inflate either decodes them or raises lt::Error.
  int decoded = 0;
  for (std::uint64_t seed = 0; seed < 3000; ++seed) {
    Bytes junk = testing::random_bytes(1 + seed % 200, seed);
    try {
      (void)inflate(junk);
      ++decoded;
    } catch (const Error&) {
    }
  }
  SUCCEED() << decoded << " random inputs happened to be valid streams";
}

}  // namespace
}  // namespace lt::data
