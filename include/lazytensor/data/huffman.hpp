#pragma once
// Canonical Huffman codes as DEFLATE defines them, decoded from a BitReader.
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

#include "lazytensor/core/error.hpp"
#include "lazytensor/data/bit_reader.hpp"

namespace lt::data::detail {

inline constexpr int max_code_bits = 15;

/// A canonical Huffman code (RFC 1951, 3.2.2). Codes of up to `fast_bits` bits decode with one
/// table look-up; longer ones are walked length by length.
class Huffman {
 public:
  /// Builds the code with `lengths[symbol]` bits per symbol (0: unused). Returns the room left
  /// in the code space: 0 for a complete code, more for an incomplete one. Over-subscribed
  /// lengths (more codes than bits allow) raise.
  int build(std::span<const std::uint8_t> lengths, const char* what) {
    count_.fill(0);
    fast_.fill(0);
    for (std::uint8_t len : lengths) ++count_[len];
    if (count_[0] == lengths.size()) return 1 << max_code_bits;  // no codes: any use fails
    int left = 1;
    for (int len = 1; len <= max_code_bits; ++len) {
      left = (left << 1) - count_[len];
      if (left < 0) fail("deflate: over-subscribed ", what, " code lengths");
    }
    // Symbols are listed by code length, then by value; next_code[len] is the first code of
    // each length, as RFC 1951 assigns them.
    std::array<std::uint16_t, max_code_bits + 1> offset{}, next_code{};
    for (int len = 1, code = 0; len <= max_code_bits; ++len) {
      int shorter = len == 1 ? 0 : count_[len - 1];
      offset[len] = static_cast<std::uint16_t>(len == 1 ? 0 : offset[len - 1] + shorter);
      code = (code + shorter) << 1;
      next_code[len] = static_cast<std::uint16_t>(code);
    }
    for (std::size_t sym = 0; sym < lengths.size(); ++sym) {
      int len = lengths[sym];
      if (len == 0) continue;
      symbol_[offset[len]++] = static_cast<std::uint16_t>(sym);
      int code = next_code[len]++;
      if (len <= fast_bits) {
        // The stream sends a code's most significant bit first: index by the reversed code.
        int reversed = 0;
        for (int b = 0; b < len; ++b) reversed |= ((code >> b) & 1) << (len - 1 - b);
        for (int k = reversed; k < (1 << fast_bits); k += 1 << len)
          fast_[static_cast<std::size_t>(k)] = static_cast<std::uint16_t>(sym << 4 | static_cast<unsigned>(len));
      }
    }
    return left;
  }

  int decode(BitReader& in) const {
    std::uint32_t bits = in.peek(max_code_bits);
    if (std::uint16_t entry = fast_[bits & ((1u << fast_bits) - 1)]) {
      in.consume(entry & 15);
      return entry >> 4;
    }
    // Canonical walk: `code` holds the first `len` bits read, `first` the first code of that
    // length and `index` the place of that length's symbols.
    int code = 0, first = 0, index = 0;
    for (int len = 1; len <= max_code_bits; ++len) {
      code |= static_cast<int>((bits >> (len - 1)) & 1);
      int count = count_[len];
      if (code - first < count) {
        in.consume(len);
        return symbol_[static_cast<std::size_t>(index + code - first)];
      }
      index += count;
      first = (first + count) << 1;
      code <<= 1;
    }
    in.consume(max_code_bits);  // raises first if the stream ended inside this code
    fail("deflate: a bit pattern that is no code of this block's Huffman code");
  }

 private:
  static constexpr int fast_bits = 10;
  std::array<std::uint16_t, 1 << fast_bits> fast_{};  // symbol << 4 | length; 0: longer code
  std::array<std::uint16_t, max_code_bits + 1> count_{};
  std::array<std::uint16_t, 288> symbol_{};  // symbols in code order
};

}  // namespace lt::data::detail
