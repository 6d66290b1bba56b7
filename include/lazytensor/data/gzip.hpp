#pragma once
// gzip decompression (RFC 1952) through zlib: every member of a file (as `cat a.gz b.gz`
// makes), each checked against the CRC-32 and length of its trailer. Declared here, defined
// once per program by the implementation (data/definitions.hpp), so that zlib's header stays
// out of the files users compile.
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace lt::data {

/// True when `bytes` start as a gzip file does (the magic bytes 1f 8b).
inline bool is_gzip(std::span<const std::uint8_t> bytes) {
  return bytes.size() >= 2 && bytes[0] == 0x1f && bytes[1] == 0x8b;
}

/// The default bound on decompressed sizes: a small forged file must not claim all memory.
inline constexpr std::size_t default_gunzip_limit = std::size_t{1} << 32;

/// The decompressed contents of gzip data: its members in turn, as `gzip -d` reads them.
/// Zero bytes after the last member are padding and ignored, as gzip ignores them; any other
/// trailing byte, a truncated or corrupt member, a CRC-32 or length that disagrees with the
/// data, and an output of more than `limit` bytes raise lt::Error saying which.
std::vector<std::uint8_t> gunzip(std::span<const std::uint8_t> in, std::size_t limit = default_gunzip_limit);

}  // namespace lt::data
