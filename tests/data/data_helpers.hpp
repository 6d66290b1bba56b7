#pragma once
// Shared by the data tests: scratch directories, files written byte by byte, gzip made by
// the `gzip` program, by zlib's deflate and by a writer of stored blocks, and a watchdog for
// code that could hang.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include <zlib.h>

#include <lazytensor/data.hpp>
#include <lazytensor/lazytensor.hpp>

namespace lt::data::testing {

using Bytes = std::vector<std::uint8_t>;

/// A fresh directory under the system's temporary directory, removed with the object.
class ScratchDir {
 public:
  ScratchDir() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    path_ = std::filesystem::temp_directory_path() /
            ("lt_data_" + std::string(info->test_suite_name()) + "_" + info->name() + "_" +
             std::to_string(std::chrono::steady_clock::now().time_since_epoch().count()));
    std::filesystem::create_directories(path_);
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

inline void write_file(const std::filesystem::path& path, const Bytes& bytes) {
  std::ofstream f(path, std::ios::binary);
  f.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  ASSERT_TRUE(f.good()) << "cannot write " << path;
}

inline Bytes file_bytes(const std::filesystem::path& path) { return read_file(path); }

/// `data` compressed by the gzip program (no name or time stored), at `level` 1 to 9.
inline Bytes gzip_program(const Bytes& data, int level, const ScratchDir& dir) {
  static int serial = 0;
  const std::filesystem::path in = dir / ("plain" + std::to_string(serial++));
  write_file(in, data);
  const std::string command = "gzip -n -" + std::to_string(level) + " -f '" + in.string() + "'";
  EXPECT_EQ(std::system(command.c_str()), 0) << command;
  return read_file(in.string() + ".gz");
}

/// `data` as one gzip member made by zlib's deflate at `level` (0 to 9) with `strategy`.
inline Bytes zlib_gzip(const Bytes& data, int level, int strategy = Z_DEFAULT_STRATEGY) {
  z_stream z{};
  EXPECT_EQ(deflateInit2(&z, level, Z_DEFLATED, 16 + MAX_WBITS, 8, strategy), Z_OK);
  Bytes out(deflateBound(&z, static_cast<uLong>(data.size())));
  z.next_in = const_cast<Bytef*>(data.data());
  z.avail_in = static_cast<uInt>(data.size());
  z.next_out = out.data();
  z.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&z, Z_FINISH), Z_STREAM_END) << data.size() << " bytes at level " << level;
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

/// CRC-32 (ISO 3309, reflected polynomial 0xEDB88320) bit by bit: a reference that shares
/// nothing with zlib's table-driven one.
inline std::uint32_t reference_crc32(const Bytes& bytes) {
  std::uint32_t c = 0xFFFFFFFFu;
  for (std::uint8_t b : bytes) {
    c ^= b;
    for (int k = 0; k < 8; ++k) c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1u)));
  }
  return ~c;
}

/// `data` as a gzip member of stored (uncompressed) deflate blocks, with optional header
/// fields, so that every byte of the file is known to the test.
struct StoredGzip {
  std::string name;          // FNAME when not empty
  std::string comment;       // FCOMMENT when not empty
  Bytes extra;               // FEXTRA when not empty
  bool header_crc = false;   // FHCRC
  std::size_t block = 65535; // bytes per stored block

  Bytes operator()(const Bytes& data) const {
    Bytes out = {0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3};
    std::uint8_t flags = 0;
    if (!extra.empty()) {
      flags |= 4;
      out.push_back(static_cast<std::uint8_t>(extra.size()));
      out.push_back(static_cast<std::uint8_t>(extra.size() >> 8));
      out.insert(out.end(), extra.begin(), extra.end());
    }
    for (auto [flag, text] : {std::pair{std::uint8_t{8}, &name}, std::pair{std::uint8_t{16}, &comment}})
      if (!text->empty()) {
        flags |= flag;
        out.insert(out.end(), text->begin(), text->end());
        out.push_back(0);
      }
    out[3] = flags;
    if (header_crc) {
      out[3] |= 2;
      std::uint32_t c = reference_crc32(out);
      out.push_back(static_cast<std::uint8_t>(c));
      out.push_back(static_cast<std::uint8_t>(c >> 8));
    }
    std::size_t pos = 0;
    do {
      std::size_t n = std::min(block, data.size() - pos);
      bool last = pos + n == data.size();
      out.push_back(last ? 1 : 0);  // BFINAL, BTYPE 00, then padding to the byte
      out.push_back(static_cast<std::uint8_t>(n));
      out.push_back(static_cast<std::uint8_t>(n >> 8));
      out.push_back(static_cast<std::uint8_t>(~n));
      out.push_back(static_cast<std::uint8_t>(~n >> 8));
      out.insert(out.end(), data.begin() + static_cast<std::ptrdiff_t>(pos),
                 data.begin() + static_cast<std::ptrdiff_t>(pos + n));
      pos += n;
    } while (pos < data.size());
    append_le32(out, reference_crc32(data));
    append_le32(out, static_cast<std::uint32_t>(data.size()));
    return out;
  }
  static void append_le32(Bytes& out, std::uint32_t v) {
    for (int k = 0; k < 4; ++k) out.push_back(static_cast<std::uint8_t>(v >> (8 * k)));
  }
};

/// Text with repeats near and far, so that a compressor uses matches and dynamic codes.
inline Bytes compressible_text(std::size_t size, std::uint64_t seed) {
  static const char* words[] = {"lazy", "tensor", "graph", "barrier", "step", "fusion", "kernel",
                                "batch", "loader", "device", "trace", "plan", " ", "\n", ", "};
  SeededRandom random(seed, 0);
  Bytes out;
  while (out.size() < size) {
    const char* w = words[random.below(std::size(words))];
    out.insert(out.end(), w, w + std::char_traits<char>::length(w));
  }
  out.resize(size);
  return out;
}

inline Bytes random_bytes(std::size_t size, std::uint64_t seed) {
  SeededRandom random(seed, 1);
  Bytes out(size);
  for (auto& b : out) b = static_cast<std::uint8_t>(random.next_u64());
  return out;
}

/// The bytes of an IDX file: magic number (type code, dims count), extents, then `payload`.
inline Bytes idx_bytes(std::uint8_t type_code, const std::vector<std::uint32_t>& dims, const Bytes& payload) {
  Bytes out = {0, 0, type_code, static_cast<std::uint8_t>(dims.size())};
  for (std::uint32_t d : dims)
    for (int k = 3; k >= 0; --k) out.push_back(static_cast<std::uint8_t>(d >> (8 * k)));
  out.insert(out.end(), payload.begin(), payload.end());
  return out;
}

/// Runs `body` on another thread; if it has not finished within `limit`, the test run stops
/// with a message instead of hanging.
template <class Body>
void within(std::chrono::seconds limit, Body&& body) {
  std::promise<void> finished;
  std::future<void> done = finished.get_future();
  std::thread runner([&] {
    try {
      body();
      finished.set_value();
    } catch (...) {
      finished.set_exception(std::current_exception());
    }
  });
  if (done.wait_for(limit) != std::future_status::ready) {
    std::fprintf(stderr, "%s: still running after %lld s: a hang\n",
                 ::testing::UnitTest::GetInstance()->current_test_info()->name(),
                 static_cast<long long>(limit.count()));
    std::_Exit(1);
  }
  runner.join();
  done.get();  // rethrows what the body threw, so ASSERT/EXPECT inside it still count
}

}  // namespace lt::data::testing
