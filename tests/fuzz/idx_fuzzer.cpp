// Fuzzes the IDX reader, gzip layer included: any bytes either parse, with every element read
// back as each dtype (or raising lt::Error where a value has no such integer), or raise
// lt::Error. ASan and UBSan catch the rest.
#include <cstdint>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include <lazytensor/data.hpp>

#include "harness.hpp"

namespace {

using lt::data::IdxArray;

/// An IDX file: magic (type code, rank), big-endian u32 extents, then `payload`.
std::vector<std::uint8_t> idx_file(std::uint8_t code, const std::vector<std::uint32_t>& dims, std::vector<std::uint8_t> payload) {
  std::vector<std::uint8_t> out = {0, 0, code, static_cast<std::uint8_t>(dims.size())};
  for (std::uint32_t d : dims)
    for (int k = 3; k >= 0; --k) out.push_back(static_cast<std::uint8_t>(d >> (8 * k)));
  out.insert(out.end(), payload.begin(), payload.end());
  return out;
}

void write(const std::filesystem::path& path, const std::vector<std::uint8_t>& bytes) {
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::vector<std::uint8_t> bytes(data, data + size);
  try {
    if (lt::data::is_gzip(bytes)) bytes = lt::data::gunzip(bytes, std::size_t{1} << 24);
    IdxArray a = IdxArray::parse(std::move(bytes));
    if (a.count() > (1 << 16)) return 0;  // reading more proves nothing more
    for (lt::DType t : {lt::f32, lt::f64, lt::i32, lt::i64, lt::boolean}) {
      try {
        lt::data::to_tensor(a, t);
      } catch (const lt::Error&) {
        // a value with no integer of this dtype
      }
    }
  } catch (const lt::Error&) {
    // refused
  }
  return 0;
}

void write_fuzz_seeds(const std::filesystem::path& dir) {
  write(dir / "u8-images", idx_file(0x08, {2, 3, 3}, std::vector<std::uint8_t>(18, 7)));
  write(dir / "i16", idx_file(0x0B, {2}, {0xFF, 0xFE, 0x01, 0x00}));
  write(dir / "i32", idx_file(0x0C, {2, 1}, {0x80, 0, 0, 0, 0, 0, 1, 2}));
  write(dir / "f64", idx_file(0x0E, {1}, {0x3F, 0xB9, 0x99, 0x99, 0x99, 0x99, 0x99, 0x9A}));
  write(dir / "empty-2x0x3", idx_file(0x08, {2, 0, 3}, {}));
  // u8-images in two gzip members (split after its 20th byte), as Python's gzip.compress
  // makes them: the fuzzer starts inside zlib's path, members and trailers included.
  write(dir / "gzip-two-members",
        {0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x03, 0x63, 0x60, 0xe0, 0x60, 0x66, 0x60, 0x60, 0x60, 0x02,
         0x62, 0x10, 0xcd, 0xcc, 0x0e, 0x04, 0x00, 0x03, 0xb0, 0xd2, 0x1c, 0x14, 0x00, 0x00, 0x00, 0x1f, 0x8b, 0x08, 0x00,
         0x00, 0x00, 0x00, 0x00, 0x02, 0x03, 0x63, 0x67, 0x47, 0x06, 0x00, 0x84, 0xa9, 0xe1, 0x3b, 0x0e, 0x00, 0x00, 0x00});
  // One per finding: NaN and an f32 past i64's range read as integers; a zero extent beside
  // extents of 2^32 - 1, whose strides overflow.
  write(dir / "finding-f32-nan", idx_file(0x0D, {1}, {0x7F, 0xC0, 0, 0}));
  write(dir / "finding-f32-1e30", idx_file(0x0D, {1}, {0x71, 0x49, 0xF2, 0xCA}));
  write(dir / "finding-zero-beside-huge-extents", idx_file(0x08, {0, 0xFFFFFFFF, 0xFFFFFFFF}, {}));
}
