#pragma once
// DEFLATE decompression (RFC 1951). The input is untrusted: every code, length and distance
// is checked, and a bad or short stream raises lt::Error saying what is wrong.
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "lazytensor/core/error.hpp"
#include "lazytensor/data/bit_reader.hpp"
#include "lazytensor/data/huffman.hpp"

namespace lt::data {

namespace detail {

// Lengths and distances: a symbol's base value and the number of extra bits added to it.
inline constexpr std::array<std::uint16_t, 29> length_base = {3,  4,  5,  6,  7,  8,  9,  10, 11,  13,
                                                              15, 17, 19, 23, 27, 31, 35, 43, 51,  59,
                                                              67, 83, 99, 115, 131, 163, 195, 227, 258};
inline constexpr std::array<std::uint8_t, 29> length_extra = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2,
                                                              2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0};
inline constexpr std::array<std::uint16_t, 30> distance_base = {
    1,   2,   3,   4,   5,   7,    9,    13,   17,   25,   33,   49,   65,    97,    129,
    193, 257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577};
inline constexpr std::array<std::uint8_t, 30> distance_extra = {0, 0, 0, 0, 1, 1, 2,  2,  3,  3,  4,  4,  5,  5,  6,
                                                                6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13};

/// Raises unless `out` can grow by `n` bytes within `limit`.
inline void check_room(const std::vector<std::uint8_t>& out, std::size_t n, std::size_t limit) {
  if (out.size() > limit || n > limit - out.size())
    fail("deflate: the output exceeds the limit of ", limit, " bytes");
}

/// Decodes one block's literals and matches with codes `lit` and `dist` into `out`. Matches
/// may reach back to `window_start`, the start of this stream's output. Only matches are
/// checked against `limit`: literals take at least one input bit each, so they cannot run far.
inline void inflate_block(BitReader& in, const Huffman& lit, const Huffman& dist, std::vector<std::uint8_t>& out,
                          std::size_t window_start, std::size_t limit) {
  for (;;) {
    int sym = lit.decode(in);
    if (sym < 256) {
      out.push_back(static_cast<std::uint8_t>(sym));
      continue;
    }
    if (sym == 256) return;
    sym -= 257;
    if (sym >= 29) fail("deflate: invalid length symbol ", sym + 257);
    std::size_t length = length_base[sym] + in.take(length_extra[sym]);
    int dsym = dist.decode(in);
    if (dsym >= 30) fail("deflate: invalid distance symbol ", dsym);
    std::size_t distance = distance_base[dsym] + in.take(distance_extra[dsym]);
    if (distance > out.size() - window_start)
      fail("deflate: a match reaches ", distance, " bytes back, before the start of the output");
    check_room(out, length, limit);
    std::size_t from = out.size() - distance;
    out.resize(out.size() + length);
    std::uint8_t* p = out.data();
    std::size_t to = out.size() - length;
    if (distance >= length) std::memcpy(p + to, p + from, length);
    else  // the match overlaps what it writes: a repeating pattern, copied byte by byte
      for (std::size_t k = 0; k < length; ++k) p[to + k] = p[from + k];
  }
}

inline void fixed_codes(Huffman& lit, Huffman& dist) {
  std::array<std::uint8_t, 288> l{};
  std::fill(l.begin(), l.begin() + 144, 8);
  std::fill(l.begin() + 144, l.begin() + 256, 9);
  std::fill(l.begin() + 256, l.begin() + 280, 7);
  std::fill(l.begin() + 280, l.end(), 8);
  lit.build(l, "literal/length");
  std::array<std::uint8_t, 30> d{};
  d.fill(5);
  dist.build(d, "distance");
}

/// Reads a dynamic block's code descriptions (RFC 1951, 3.2.7) into `lit` and `dist`.
inline void dynamic_codes(BitReader& in, Huffman& lit, Huffman& dist) {
  const int nlit = static_cast<int>(in.take(5)) + 257;
  const int ndist = static_cast<int>(in.take(5)) + 1;
  const int nclen = static_cast<int>(in.take(4)) + 4;
  if (nlit > 286) fail("deflate: ", nlit, " literal/length codes, more than 286");
  if (ndist > 30) fail("deflate: ", ndist, " distance codes, more than 30");
  static constexpr std::array<std::uint8_t, 19> order = {16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15};
  std::array<std::uint8_t, 19> clen{};
  for (int k = 0; k < nclen; ++k) clen[order[static_cast<std::size_t>(k)]] = static_cast<std::uint8_t>(in.take(3));
  Huffman lencode;
  if (lencode.build(clen, "code length") != 0) fail("deflate: incomplete code length code");

  std::array<std::uint8_t, 286 + 30> lengths{};
  for (int k = 0; k < nlit + ndist;) {
    int sym = lencode.decode(in);
    if (sym < 16) {
      lengths[static_cast<std::size_t>(k++)] = static_cast<std::uint8_t>(sym);
      continue;
    }
    std::uint8_t value = 0;
    int repeat = 0;
    if (sym == 16) {
      if (k == 0) fail("deflate: a repeat of the previous code length comes first");
      value = lengths[static_cast<std::size_t>(k - 1)];
      repeat = 3 + static_cast<int>(in.take(2));
    } else if (sym == 17) {
      repeat = 3 + static_cast<int>(in.take(3));
    } else {
      repeat = 11 + static_cast<int>(in.take(7));
    }
    if (k + repeat > nlit + ndist) fail("deflate: code lengths repeat past the ", nlit + ndist, " codes");
    std::fill_n(lengths.begin() + k, repeat, value);
    k += repeat;
  }
  if (lengths[256] == 0) fail("deflate: the block has no end-of-block code");
  // An incomplete code is allowed only as a single code of one bit (RFC 1951 permits a lone
  // distance code; zlib accepts the same for literal/length codes).
  auto single_code = [](std::span<const std::uint8_t> l) {
    return std::count_if(l.begin(), l.end(), [](std::uint8_t x) { return x != 0; }) == 1 &&
           *std::max_element(l.begin(), l.end()) == 1;
  };
  std::span<const std::uint8_t> lit_lengths(lengths.data(), static_cast<std::size_t>(nlit));
  std::span<const std::uint8_t> dist_lengths(lengths.data() + nlit, static_cast<std::size_t>(ndist));
  if (lit.build(lit_lengths, "literal/length") != 0 && !single_code(lit_lengths))
    fail("deflate: incomplete literal/length code");
  int dist_left = dist.build(dist_lengths, "distance");
  bool no_distances = std::all_of(dist_lengths.begin(), dist_lengths.end(), [](std::uint8_t x) { return x == 0; });
  if (dist_left != 0 && !no_distances && !single_code(dist_lengths)) fail("deflate: incomplete distance code");
}

}  // namespace detail

/// The default bound on decompressed sizes: a small forged stream must not claim all memory.
inline constexpr std::size_t default_inflate_limit = std::size_t{1} << 32;

/// Decompresses the DEFLATE stream at the start of `in`, appending to `out`, which must not
/// grow past `limit` bytes. Returns the number of input bytes the stream took (up to its last,
/// partly used byte).
inline std::size_t inflate_into(std::span<const std::uint8_t> in, std::vector<std::uint8_t>& out,
                                std::size_t limit = default_inflate_limit) {
  detail::BitReader bits(in);
  const std::size_t window_start = out.size();
  detail::Huffman lit, dist;
  bool last = false;
  while (!last) {
    last = bits.take(1) != 0;
    switch (bits.take(2)) {
      case 0: {  // stored
        std::span<const std::uint8_t> header = bits.take_bytes(4);
        unsigned len = header[0] | header[1] << 8, nlen = header[2] | header[3] << 8;
        if (len != (~nlen & 0xFFFFu)) fail("deflate: a stored block's length ", len, " and its complement ", nlen, " disagree");
        std::span<const std::uint8_t> bytes = bits.take_bytes(len);
        detail::check_room(out, bytes.size(), limit);
        out.insert(out.end(), bytes.begin(), bytes.end());
        break;
      }
      case 1:
        detail::fixed_codes(lit, dist);
        detail::inflate_block(bits, lit, dist, out, window_start, limit);
        break;
      case 2:
        detail::dynamic_codes(bits, lit, dist);
        detail::inflate_block(bits, lit, dist, out, window_start, limit);
        break;
      default: fail("deflate: invalid block type 3");
    }
    detail::check_room(out, 0, limit);  // literals, unchecked one by one, may have gone past
  }
  return bits.bytes_used();
}

/// The decompressed bytes of the DEFLATE stream `in`, which must fill `in` exactly.
inline std::vector<std::uint8_t> inflate(std::span<const std::uint8_t> in, std::size_t limit = default_inflate_limit) {
  std::vector<std::uint8_t> out;
  std::size_t used = inflate_into(in, out, limit);
  if (used != in.size()) fail("deflate: ", in.size() - used, " bytes follow the end of the stream");
  return out;
}

}  // namespace lt::data
