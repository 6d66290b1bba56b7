#pragma once
// gzip decompression (RFC 1952) on top of inflate: member headers, CRC-32 and length checks,
// and files of several members (as `cat a.gz b.gz` makes).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "lazytensor/data/crc32.hpp"
#include "lazytensor/data/inflate.hpp"

namespace lt::data {

/// True when `bytes` start as a gzip file does (the magic bytes 1f 8b).
inline bool is_gzip(std::span<const std::uint8_t> bytes) {
  return bytes.size() >= 2 && bytes[0] == 0x1f && bytes[1] == 0x8b;
}

namespace detail {
inline std::uint32_t read_le32(std::span<const std::uint8_t> b) {
  return std::uint32_t{b[0]} | std::uint32_t{b[1]} << 8 | std::uint32_t{b[2]} << 16 | std::uint32_t{b[3]} << 24;
}

/// The size of the member header at the start of `in`, checked field by field.
inline std::size_t gzip_header_size(std::span<const std::uint8_t> in) {
  constexpr std::uint8_t fhcrc = 2, fextra = 4, fname = 8, fcomment = 16;
  if (in.size() < 10) fail("gzip: the header is truncated");
  if (!is_gzip(in)) fail("gzip: bad magic bytes (a gzip member starts with 1f 8b)");
  if (in[2] != 8) fail("gzip: compression method ", int{in[2]}, " is not deflate (8)");
  const std::uint8_t flags = in[3];
  if (flags & 0xE0) fail("gzip: reserved header flags are set");
  std::size_t pos = 10;
  auto need = [&](std::size_t n) {
    if (n > in.size() - pos) fail("gzip: the header is truncated");
  };
  if (flags & fextra) {
    need(2);
    std::size_t len = in[pos] | std::size_t{in[pos + 1]} << 8;
    pos += 2;
    need(len);
    pos += len;
  }
  for (std::uint8_t zero_terminated : {fname, fcomment})
    if (flags & zero_terminated) {
      auto end = std::find(in.begin() + static_cast<std::ptrdiff_t>(pos), in.end(), std::uint8_t{0});
      if (end == in.end()) fail("gzip: the header is truncated (an unterminated name or comment)");
      pos = static_cast<std::size_t>(end - in.begin()) + 1;
    }
  if (flags & fhcrc) {
    need(2);
    std::uint32_t stored = in[pos] | std::uint32_t{in[pos + 1]} << 8;
    if (stored != (crc32(in.first(pos)) & 0xFFFF)) fail("gzip: header CRC mismatch");
    pos += 2;
  }
  return pos;
}
}  // namespace detail

/// The decompressed contents of gzip data: every member in turn, each checked against the
/// CRC-32 and length its trailer records. Anything that is not a whole member raises, and so
/// does an output of more than `limit` bytes.
inline std::vector<std::uint8_t> gunzip(std::span<const std::uint8_t> in, std::size_t limit = default_inflate_limit) {
  std::vector<std::uint8_t> out;
  // The last trailer records the size of the last member (of a single one, the whole output);
  // one compressed byte yields at most 1032, which bounds what a forged size can reserve.
  if (in.size() >= 18) out.reserve(std::min({std::size_t{detail::read_le32(in.last(4))}, in.size() * 1032, limit}));
  std::size_t pos = 0;
  do {
    const std::size_t start = out.size();
    pos += detail::gzip_header_size(in.subspan(pos));
    pos += inflate_into(in.subspan(pos), out, limit);
    if (in.size() - pos < 8) fail("gzip: the trailer (CRC-32 and length) is truncated");
    const std::uint32_t crc = detail::read_le32(in.subspan(pos, 4));
    const std::uint32_t size = detail::read_le32(in.subspan(pos + 4, 4));
    pos += 8;
    std::span<const std::uint8_t> member(out.data() + start, out.size() - start);
    if (const std::uint32_t actual = crc32(member); actual != crc)
      fail("gzip: CRC-32 mismatch (the trailer records ", crc, ", the data gives ", actual, ")");
    if (static_cast<std::uint32_t>(member.size()) != size)
      fail("gzip: length mismatch (the trailer records ", size, " bytes mod 2^32, the data has ", member.size(), ")");
  } while (pos < in.size());
  return out;
}

}  // namespace lt::data
