#pragma once
// data/'s functions that a program compiles once: included by the implementation
// (lazytensor/implementation.hpp), never by a file of its own. They keep zlib's header out of
// the headers users include.
#include <algorithm>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <new>
#include <span>
#include <string_view>
#include <vector>

#include <zlib.h>

#include "lazytensor/core/error.hpp"
#include "lazytensor/data/gzip.hpp"

namespace lt::data {

namespace detail {

/// A zlib inflate stream that reads gzip members only: 16 + MAX_WBITS has zlib parse the
/// header and check the trailer's CRC-32 and ISIZE itself.
class GzipStream {
 public:
  GzipStream() {
    if (const int rc = inflateInit2(&z_, 16 + MAX_WBITS); rc != Z_OK)
      fail("gzip: zlib cannot start an inflate stream (", z_.msg ? z_.msg : zError(rc), ")");
  }
  ~GzipStream() { inflateEnd(&z_); }
  GzipStream(const GzipStream&) = delete;
  GzipStream& operator=(const GzipStream&) = delete;
  z_stream* operator->() { return &z_; }
  z_stream* get() { return &z_; }

 private:
  z_stream z_{};
};

/// What a zlib data error means, in the words of the gzip format where zlib's are terse.
inline std::string_view gzip_fault(std::string_view zlib_message) {
  if (zlib_message == "incorrect data check") return "CRC-32 mismatch: the data differ from what the trailer records";
  if (zlib_message == "incorrect length check") return "length mismatch: the trailer's ISIZE differs from the data's";
  if (zlib_message == "incorrect header check") return "bad magic bytes (a gzip member starts with 1f 8b)";
  if (zlib_message == "unknown compression method") return "the compression method is not deflate (8)";
  if (zlib_message == "unknown header flags set") return "reserved header flags are set";
  if (zlib_message == "header crc mismatch") return "header CRC mismatch";
  return "corrupt deflate data";
}

/// Bytes to reserve for the output: the last trailer's ISIZE, which is the whole output of a
/// one-member file (mod 2^32). It is untrusted, so it is capped by `limit` and by 1032 bytes
/// per input byte, the most deflate can make of one.
inline std::size_t gunzip_size_hint(std::span<const std::uint8_t> in, std::size_t limit) {
  if (in.size() < 18) return 0;  // smaller than a header and a trailer
  const std::uint8_t* t = in.data() + in.size() - 4;
  const std::size_t isize = std::uint32_t{t[0]} | std::uint32_t{t[1]} << 8 | std::uint32_t{t[2]} << 16 |
                            std::uint32_t{t[3]} << 24;
  constexpr std::size_t max_ratio = 1032;
  const std::size_t deflate_bound = in.size() > SIZE_MAX / max_ratio ? SIZE_MAX : in.size() * max_ratio;
  return std::min({isize, deflate_bound, limit});
}

/// Makes `out` longer by up to `chunk` bytes but not past `cap`; raises lt::Error where memory
/// runs out.
inline void grow(std::vector<std::uint8_t>& out, std::size_t cap) {
  constexpr std::size_t chunk = std::size_t{1} << 20;  // zeroed just before zlib fills it, while cached
  const std::size_t size = out.size();
  if (size == cap) fail("gzip: an output of more than ", cap, " bytes is more than a vector can hold");
  const std::size_t next = cap - size > chunk ? size + chunk : cap;
  try {
    out.resize(next);
  } catch (const std::bad_alloc&) {
    fail("gzip: out of memory growing the output to ", next, " bytes");
  }
}

}  // namespace detail

std::vector<std::uint8_t> gunzip(std::span<const std::uint8_t> in, std::size_t limit) {
  if (in.empty()) fail("gzip: the input is empty (truncated before member 1's header)");
  std::vector<std::uint8_t> out;
  const std::size_t hint = detail::gunzip_size_hint(in, limit);
  try {
    out.reserve(hint);
  } catch (const std::bad_alloc&) {
    fail("gzip: out of memory reserving ", hint, " bytes for the output");
  }
  // One byte past the limit is room enough to find that the data go past it.
  const std::size_t cap = limit < out.max_size() ? limit + 1 : out.max_size();
  std::size_t written = 0;  // bytes of `out` that hold output; the rest is room for zlib
  std::size_t member_start = 0;  // where the member being read starts in `in`
  detail::GzipStream z;
  for (std::size_t member = 1;; ++member) {
    std::size_t fed = member_start;  // input handed to zlib (avail_in is 32 bits: in pieces)
    z->next_in = nullptr;
    z->avail_in = 0;
    for (;;) {
      if (z->avail_in == 0 && fed < in.size()) {
        const std::size_t n = std::min<std::size_t>(in.size() - fed, UINT_MAX);
        z->next_in = const_cast<Bytef*>(in.data() + fed);  // zlib's API is not const; it only reads
        z->avail_in = static_cast<uInt>(n);
        fed += n;
      }
      if (written == out.size()) detail::grow(out, cap);
      const std::size_t room = std::min<std::size_t>(out.size() - written, UINT_MAX);
      z->next_out = out.data() + written;
      z->avail_out = static_cast<uInt>(room);
      const int rc = inflate(z.get(), Z_NO_FLUSH);
      written += room - z->avail_out;
      if (written > limit) fail("gzip: the output exceeds the limit of ", limit, " bytes (member ", member, ")");
      if (rc == Z_STREAM_END) break;
      if (rc == Z_OK) continue;
      if (rc == Z_BUF_ERROR) {  // no progress: zlib needs input there is no more of, or room
        if (z->avail_in == 0 && fed == in.size())
          fail("gzip: the input ends inside member ", member, " (truncated after ", in.size(), " bytes)");
        continue;
      }
      if (rc == Z_DATA_ERROR || rc == Z_NEED_DICT) {
        const std::string_view what = z->msg ? z->msg : "no message";
        fail("gzip: member ", member, ": ", detail::gzip_fault(what), " (zlib: ", what, ")");
      }
      if (rc == Z_MEM_ERROR) fail("gzip: zlib ran out of memory in member ", member);
      fail("gzip: zlib failed in member ", member, " (", zError(rc), ")");
    }
    const std::size_t end = fed - z->avail_in;
    if (end == in.size()) break;
    // As gzip -d: another member follows where the magic bytes do; zeros are padding.
    std::span<const std::uint8_t> rest = in.subspan(end);
    if (rest[0] != 0x1f || (rest.size() > 1 && rest[1] != 0x8b)) {
      if (std::all_of(rest.begin(), rest.end(), [](std::uint8_t b) { return b == 0; })) break;
      fail("gzip: ", rest.size(), " bytes of trailing garbage follow member ", member, " (at byte ", end, ")");
    }
    member_start = end;
    if (const int rc = inflateReset(z.get()); rc != Z_OK) fail("gzip: zlib cannot reset its stream (", zError(rc), ")");
  }
  out.resize(written);  // room past the output was zeroed a chunk at a time: little to give back
  return out;
}

}  // namespace lt::data
