#pragma once
// The bit order of DEFLATE streams (RFC 1951, 3.1.1), over an untrusted input.
#include <cstddef>
#include <cstdint>
#include <span>

#include "lazytensor/core/error.hpp"

namespace lt::data::detail {

/// Reads a DEFLATE stream's bits, least significant first. Peeking past the end reads zeros;
/// consuming them raises, so a stream cut short is always noticed.
class BitReader {
 public:
  explicit BitReader(std::span<const std::uint8_t> in) : in_(in) {}

  /// The next `n` (at most 32) bits, not consumed.
  std::uint32_t peek(int n) {
    refill();
    return static_cast<std::uint32_t>(bits_ & ((std::uint64_t{1} << n) - 1));
  }
  void consume(int n) {
    if (n > count_) fail("deflate: the stream is truncated");
    bits_ >>= n;
    count_ -= n;
  }
  std::uint32_t take(int n) {
    std::uint32_t v = peek(n);
    consume(n);
    return v;
  }
  /// Skips to the next byte boundary and hands out the following `n` whole bytes.
  std::span<const std::uint8_t> take_bytes(std::size_t n) {
    consume(count_ % 8);
    pos_ -= static_cast<std::size_t>(count_ / 8);  // give back the whole bytes held as bits
    bits_ = 0;
    count_ = 0;
    if (n > in_.size() - pos_) fail("deflate: a stored block is truncated");
    std::span<const std::uint8_t> bytes = in_.subspan(pos_, n);
    pos_ += n;
    return bytes;
  }
  /// Input bytes used so far, counting a partly read last byte as used.
  std::size_t bytes_used() const { return pos_ - static_cast<std::size_t>(count_ / 8); }

 private:
  void refill() {
    while (count_ <= 56 && pos_ < in_.size()) {
      bits_ |= std::uint64_t{in_[pos_++]} << count_;
      count_ += 8;
    }
  }
  std::span<const std::uint8_t> in_;
  std::size_t pos_ = 0;
  std::uint64_t bits_ = 0;
  int count_ = 0;
};

}  // namespace lt::data::detail
