// gunzip: streams of the gzip program and of zlib's deflate at every level and strategy, stored
// blocks with every header field, several and empty members, trailing bytes, the output
// limit, and every kind of damage a file can carry, which must raise lt::Error and never crash.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "data_helpers.hpp"

namespace lt::data {
namespace {

using testing::Bytes;
using testing::ScratchDir;
using testing::StoredGzip;

Bytes text(const std::string& s) { return Bytes(s.begin(), s.end()); }

Bytes concat(std::initializer_list<Bytes> parts) {
  Bytes out;
  for (const Bytes& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

/// A gzip member around raw deflate bytes `body`, whose trailer records `crc` and `size`.
Bytes member_of(const Bytes& body, std::uint32_t crc, std::uint32_t size) {
  Bytes out = {0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3};
  out.insert(out.end(), body.begin(), body.end());
  StoredGzip::append_le32(out, crc);
  StoredGzip::append_le32(out, size);
  return out;
}

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

#define EXPECT_ERROR_HAS(call, text)                                   \
  do {                                                                 \
    const std::string what_ = error_of([&] { (void)(call); });         \
    EXPECT_NE(what_.find(text), std::string::npos) << what_;           \
  } while (0)

const std::vector<Bytes>& inputs() {
  static const std::vector<Bytes> all = {text("hello, hello, hello lazy tensor"),  // fixed Huffman codes
                                         Bytes{},
                                         Bytes(100000, 'a'),                      // long overlapping matches
                                         testing::compressible_text(300000, 1),  // dynamic codes, many blocks
                                         testing::random_bytes(70000, 2)};       // stored blocks
  return all;
}

TEST(Gunzip, ReferenceCrcOfTheTestsIsRight) {
  // StoredGzip's trailers come from the tests' own CRC: check it on the standard values.
  EXPECT_EQ(testing::reference_crc32(text("")), 0u);
  EXPECT_EQ(testing::reference_crc32(text("123456789")), 0xCBF43926u);
  EXPECT_EQ(testing::reference_crc32(text("The quick brown fox jumps over the lazy dog")), 0x414FA339u);
}

TEST(Gunzip, StreamsOfTheGzipProgram) {
  ScratchDir dir;
  for (const Bytes& input : inputs())
    for (int level : {1, 6, 9}) {
      Bytes gz = testing::gzip_program(input, level, dir);
      ASSERT_TRUE(is_gzip(gz));
      EXPECT_EQ(gunzip(gz), input) << input.size() << " bytes at level " << level;
    }
}

TEST(Gunzip, StreamsOfZlibAtEveryLevelAndStrategy) {
  for (const Bytes& input : inputs()) {
    for (int level = 0; level <= 9; ++level)
      EXPECT_EQ(gunzip(testing::zlib_gzip(input, level)), input) << input.size() << " bytes at level " << level;
    for (int strategy : {Z_FILTERED, Z_HUFFMAN_ONLY, Z_RLE, Z_FIXED})
      EXPECT_EQ(gunzip(testing::zlib_gzip(input, 6, strategy)), input) << input.size() << " bytes, strategy " << strategy;
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
  const Bytes a = text("first member; "), b = testing::compressible_text(5000, 5), c = testing::random_bytes(3000, 6);
  const Bytes file = concat({testing::gzip_program(a, 9, dir), StoredGzip{.name = "b"}(b), testing::zlib_gzip(c, 1)});
  EXPECT_EQ(gunzip(file), concat({a, b, c}));
  // Many small members: each restarts the stream.
  Bytes many, want;
  for (int k = 0; k < 200; ++k) {
    const Bytes piece = testing::compressible_text(static_cast<std::size_t>(k) * 7, static_cast<std::uint64_t>(k));
    many = concat({many, testing::zlib_gzip(piece, k % 10)});
    want = concat({want, piece});
  }
  EXPECT_EQ(gunzip(many), want);
}

TEST(Gunzip, EmptyMembersAnywhere) {
  ScratchDir dir;
  const Bytes empty_program = testing::gzip_program(Bytes{}, 6, dir), empty_zlib = testing::zlib_gzip(Bytes{}, 9);
  const Bytes empty_stored = StoredGzip{}(Bytes{});
  const Bytes data = text("between empty members");
  const Bytes full = testing::zlib_gzip(data, 6);
  EXPECT_EQ(gunzip(empty_program), Bytes{});
  EXPECT_EQ(gunzip(concat({empty_program, empty_zlib, empty_stored})), Bytes{});
  EXPECT_EQ(gunzip(concat({empty_zlib, full})), data);
  EXPECT_EQ(gunzip(concat({full, empty_stored})), data);
  EXPECT_EQ(gunzip(concat({empty_stored, full, empty_program, full, empty_zlib})), concat({data, data}));
}

TEST(Gunzip, DamagedHeaders) {
  const Bytes good = StoredGzip{.name = "x"}(text("some data to protect"));
  auto with = [&](std::size_t at, std::uint8_t value) {
    Bytes b = good;
    b[at] = value;
    return b;
  };
  EXPECT_ERROR_HAS(gunzip(Bytes{}), "empty");
  EXPECT_ERROR_HAS(gunzip(with(1, 0x8c)), "bad magic bytes");
  EXPECT_ERROR_HAS(gunzip(with(2, 7)), "not deflate");
  EXPECT_ERROR_HAS(gunzip(with(3, good[3] | 0x20)), "reserved header flags");
  Bytes hcrc = StoredGzip{.header_crc = true}(text("data"));
  hcrc[10] ^= 1;  // the header CRC itself
  EXPECT_ERROR_HAS(gunzip(hcrc), "header CRC mismatch");
  EXPECT_ERROR_HAS(gunzip(Bytes({0x1f, 0x8b, 8, 8, 0, 0, 0, 0, 0, 3, 'a', 'b'})), "truncated");
}

TEST(Gunzip, EveryCrcAndLengthByteIsChecked) {
  const Bytes data = text("some data to protect");
  for (const Bytes& good : {StoredGzip{}(data), testing::zlib_gzip(data, 9)}) {
    for (std::size_t k = 0; k < 4; ++k) {
      Bytes bad_crc = good;
      bad_crc[good.size() - 8 + k] ^= 0x40;
      EXPECT_ERROR_HAS(gunzip(bad_crc), "CRC-32 mismatch");
      Bytes bad_size = good;
      bad_size[good.size() - 4 + k] ^= 0x40;
      EXPECT_ERROR_HAS(gunzip(bad_size), "length mismatch");
    }
    Bytes bad_data = StoredGzip{}(data);
    bad_data[bad_data.size() - 10] ^= 1;  // a byte of the stored data
    EXPECT_ERROR_HAS(gunzip(bad_data), "CRC-32 mismatch");
  }
  // A fault in a later member names that member.
  Bytes second = StoredGzip{}(data);
  second[second.size() - 5] ^= 1;
  EXPECT_ERROR_HAS(gunzip(concat({StoredGzip{}(data), second})), "member 2: CRC-32 mismatch");
}

TEST(Gunzip, BadDeflateDataRaisesWithZlibsReason) {
  const std::uint32_t crc = testing::reference_crc32(text("x"));
  EXPECT_ERROR_HAS(gunzip(member_of({0x07}, 0, 0)), "invalid block type");
  // A stored block whose length and complement disagree.
  EXPECT_ERROR_HAS(gunzip(member_of({0x01, 0x05, 0x00, 0x00, 0x00}, 0, 0)), "invalid stored block lengths");
  // Fixed codes: length symbol 257 then distance code 0, with nothing written yet.
  EXPECT_ERROR_HAS(gunzip(member_of({0x03, 0x02, 0x00}, 0, 3)), "too far back");
  // The same stored 'x' is sound, and refused with a wrong trailer.
  EXPECT_EQ(gunzip(member_of({0x01, 0x01, 0x00, 0xFE, 0xFF, 'x'}, crc, 1)), text("x"));
  EXPECT_ERROR_HAS(gunzip(member_of({0x01, 0x01, 0x00, 0xFE, 0xFF, 'x'}, crc, 2)), "length mismatch");
}

TEST(Gunzip, TrailingZerosArePaddingAndOtherBytesGarbage) {
  const Bytes data = testing::compressible_text(1000, 8);
  const Bytes gz = testing::zlib_gzip(data, 6);
  // gzip -d ignores zero padding after the last member (as tapes add it).
  EXPECT_EQ(gunzip(concat({gz, Bytes(1, 0)})), data);
  EXPECT_EQ(gunzip(concat({gz, Bytes(4096, 0)})), data);
  EXPECT_ERROR_HAS(gunzip(concat({gz, text("x")})), "1 bytes of trailing garbage follow member 1");
  EXPECT_ERROR_HAS(gunzip(concat({gz, Bytes(10, 0), text("x")})), "trailing garbage");
  EXPECT_ERROR_HAS(gunzip(concat({gz, gz, Bytes{0x1f, 0x8c, 0, 0}})), "follow member 2");
  // The magic bytes start a member, so what follows them must be one.
  EXPECT_ERROR_HAS(gunzip(concat({gz, Bytes{0x1f}})), "inside member 2");
  EXPECT_ERROR_HAS(gunzip(concat({gz, Bytes{0x1f, 0x8b}})), "inside member 2");
  EXPECT_ERROR_HAS(gunzip(concat({gz, Bytes{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3}})), "truncated");
  EXPECT_ERROR_HAS(gunzip(concat({gz, Bytes{0x1f, 0x8b, 9, 0, 0, 0, 0, 0, 0, 3, 0}})), "member 2: the compression method");
}

TEST(Gunzip, OutputBeyondTheLimitRaises) {
  ScratchDir dir;
  const Bytes zeros(1 << 20, 0);  // a megabyte of zeros compresses about a thousandfold
  const Bytes gz = testing::gzip_program(zeros, 9, dir);
  EXPECT_EQ(gunzip(gz, zeros.size()), zeros) << "exactly at the limit";
  EXPECT_ERROR_HAS(gunzip(gz, zeros.size() - 1), "exceeds the limit of 1048575 bytes");
  EXPECT_ERROR_HAS(gunzip(StoredGzip{}(zeros), 1000), "exceeds the limit");
  EXPECT_EQ(gunzip(gz, std::numeric_limits<std::size_t>::max()), zeros) << "no limit overflows";
  EXPECT_EQ(gunzip(StoredGzip{}(Bytes{}), 0), Bytes{});
  EXPECT_ERROR_HAS(gunzip(testing::zlib_gzip(text("a"), 6), 0), "exceeds the limit of 0 bytes");
  // Across members: each fits, together they do not.
  EXPECT_EQ(gunzip(concat({gz, gz}), 2 * zeros.size()).size(), 2 * zeros.size());
  EXPECT_ERROR_HAS(gunzip(concat({gz, gz}), 2 * zeros.size() - 1), "(member 2)");
}

TEST(Gunzip, AZipBombStopsAtTheLimit) {
  // 64 MiB in one member of about 64 KiB, and 4 GiB in 4096 members of 1 MiB each: neither
  // may get far past a limit of 8 MiB, whatever its trailers claim.
  const std::size_t limit = std::size_t{8} << 20;
  const Bytes one = testing::zlib_gzip(Bytes(std::size_t{64} << 20, 0), 9);
  ASSERT_LT(one.size(), std::size_t{1} << 17);
  EXPECT_ERROR_HAS(gunzip(one, limit), "exceeds the limit of 8388608 bytes (member 1)");
  const Bytes mib = testing::zlib_gzip(Bytes(std::size_t{1} << 20, 0), 9);
  Bytes many;
  for (int k = 0; k < 4096; ++k) many.insert(many.end(), mib.begin(), mib.end());
  testing::within(std::chrono::seconds(60), [&] { EXPECT_ERROR_HAS(gunzip(many, limit), "(member 9)"); });
  // A trailer that claims 4 GiB - 1 reserves no more than the input could make.
  const std::uint32_t crc = testing::reference_crc32(text("x"));
  EXPECT_ERROR_HAS(gunzip(member_of({0x01, 0x01, 0x00, 0xFE, 0xFF, 'x'}, crc, 0xFFFFFFFFu)), "length mismatch");
}

TEST(Gunzip, EveryTruncationRaises) {
  ScratchDir dir;
  const Bytes gz = testing::gzip_program(testing::compressible_text(3000, 6), 9, dir);
  for (std::size_t n = 0; n < gz.size(); ++n)
    EXPECT_THROW(gunzip(std::span(gz).first(n)), Error) << "cut at " << n << " of " << gz.size();
  // Two members: every cut raises but the one between them, which leaves the first whole.
  const Bytes a = testing::compressible_text(500, 9), b = testing::random_bytes(300, 10);
  const Bytes first = testing::zlib_gzip(a, 6), both = concat({first, StoredGzip{.comment = "c"}(b)});
  EXPECT_EQ(gunzip(both), concat({a, b}));
  for (std::size_t n = 0; n < both.size(); ++n) {
    if (n == first.size()) {
      EXPECT_EQ(gunzip(std::span(both).first(n)), a);
      continue;
    }
    const std::string what = error_of([&] { (void)gunzip(std::span(both).first(n)); });
    EXPECT_NE(what.find(n < first.size() ? "member 1" : "member 2"), std::string::npos) << "cut at " << n << ": " << what;
  }
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

TEST(Gunzip, RandomStreamsNeverCrash) {
  // Whatever follows a sound header, gunzip either decodes it or raises lt::Error.
  int decoded = 0;
  for (std::uint64_t seed = 0; seed < 3000; ++seed) {
    Bytes junk = concat({Bytes{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3}, testing::random_bytes(1 + seed % 200, seed)});
    try {
      (void)gunzip(junk, 1 << 20);
      ++decoded;
    } catch (const Error&) {
    }
  }
  SUCCEED() << decoded << " random inputs happened to be valid members";
}

}  // namespace
}  // namespace lt::data
