#pragma once
// Shared by the io tests: scratch directories, files written byte by byte, safetensors files
// assembled by hand from the published format, and the raw bytes of a tensor.
#include <gtest/gtest.h>

#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <lazytensor/io.hpp>
#include <lazytensor/nn.hpp>
#include <lazytensor/optim.hpp>
#include <lazytensor/lazytensor.hpp>

namespace lt::io::testing {

using Bytes = std::vector<std::uint8_t>;

/// A fresh directory under the system's temporary directory, removed with the object.
class ScratchDir {
 public:
  ScratchDir() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    path_ = std::filesystem::temp_directory_path() /
            ("lt_io_" + std::string(info->test_suite_name()) + "_" + info->name() + "_" + std::to_string(::getpid()) +
             "_" + std::to_string(std::chrono::steady_clock::now().time_since_epoch().count()));
    std::filesystem::create_directories(path_);
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::filesystem::path& path() const { return path_; }
  std::string operator/(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

inline void write_bytes(const std::string& path, const Bytes& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  ASSERT_TRUE(out.good()) << path;
}

inline Bytes read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return Bytes(std::istreambuf_iterator<char>(in), {});
}

/// A safetensors file: the 8-byte length of `header`, `header` as given (no padding added),
/// then `data`.
inline Bytes safetensors_bytes(const std::string& header, const Bytes& data) {
  Bytes out(8);
  std::uint64_t n = header.size();
  for (int k = 0; k < 8; ++k) out[static_cast<std::size_t>(k)] = static_cast<std::uint8_t>(n >> (8 * k));
  out.insert(out.end(), header.begin(), header.end());
  out.insert(out.end(), data.begin(), data.end());
  return out;
}

/// `header` padded with spaces to a multiple of 8, as the reference writer pads it.
inline std::string padded(std::string header) {
  header.append((8 - header.size() % 8) % 8, ' ');
  return header;
}

/// The bytes of `values` as stored in a file (little-endian, the host's order).
template <class T>
Bytes le_bytes(const std::vector<T>& values) {
  Bytes out(values.size() * sizeof(T));
  if (!out.empty()) std::memcpy(out.data(), values.data(), out.size());
  return out;
}

/// The bytes of `t`'s elements in row-major order, whatever its layout, dtype or device.
inline Bytes raw_bytes(const Tensor& t) {
  Array a = materialize(t);
  const std::size_t item = itemsize(a.view.dtype);
  Bytes out(static_cast<std::size_t>(a.view.numel()) * item);
  std::vector<std::int64_t> index(static_cast<std::size_t>(a.view.shape.rank()), 0);
  for (std::size_t k = 0; k < static_cast<std::size_t>(a.view.numel()); ++k) {
    std::memcpy(out.data() + k * item, a.view.data + a.view.offset(index) * static_cast<std::int64_t>(item), item);
    for (int d = a.view.shape.rank() - 1; d >= 0; --d) {
      if (++index[static_cast<std::size_t>(d)] < a.view.shape[d]) break;
      index[static_cast<std::size_t>(d)] = 0;
    }
  }
  return out;
}

/// A cpu tensor of `dtype` and `shape` holding `bytes` as they are (any dtype, bf16 included).
inline Tensor tensor_of_bytes(DType dtype, const Shape& shape, const Bytes& bytes) {
  Array a = Array::empty(dtype, shape);
  EXPECT_EQ(bytes.size(), static_cast<std::size_t>(shape.numel()) * itemsize(dtype));
  if (!bytes.empty()) std::memcpy(a.view.data, bytes.data(), bytes.size());
  return tensor_from_array(a, cpu);
}

/// A tensor of `dtype` and `shape` whose bytes follow a pattern of `seed` that is valid for
/// the dtype (0 or 1 for bool; finite values for floating types).
inline Tensor patterned(DType dtype, const Shape& shape, unsigned seed) {
  const std::size_t n = static_cast<std::size_t>(shape.numel());
  Bytes bytes(n * itemsize(dtype));
  for (std::size_t k = 0; k < n; ++k) {
    std::uint64_t v = (k + 1) * 2654435761u + seed * 40503u;
    std::uint8_t* p = bytes.data() + k * itemsize(dtype);
    switch (dtype) {
      case DType::boolean: *p = static_cast<std::uint8_t>(v & 1); break;
      case DType::i32: { auto x = static_cast<std::int32_t>(v) - 7; std::memcpy(p, &x, 4); break; }
      case DType::i64: { auto x = static_cast<std::int64_t>(v * 0x9E3779B97F4A7C15ull); std::memcpy(p, &x, 8); break; }
      case DType::f32: { float x = static_cast<float>(v % 100003) / 7.0f - 1000; std::memcpy(p, &x, 4); break; }
      case DType::f64: { double x = static_cast<double>(v % 1000003) / 13.0 - 3e4; std::memcpy(p, &x, 8); break; }
      case DType::bf16: { auto x = static_cast<std::uint16_t>(0x3f00 + v % 0x200); std::memcpy(p, &x, 2); break; }
      case DType::f16: { auto x = static_cast<std::uint16_t>(0x3800 + v % 0x800); std::memcpy(p, &x, 2); break; }
    }
  }
  return tensor_of_bytes(dtype, shape, bytes);
}

/// Expects `path`'s load to raise lt::Error whose message names the file and holds `fault`.
inline void expect_load_error(const std::string& path, const std::string& fault) {
  try {
    (void)lt::load(path);
    ADD_FAILURE() << "loading " << path << " did not raise; expected: " << fault;
  } catch (const Error& e) {
    std::string what = e.what();
    EXPECT_NE(what.find(path), std::string::npos) << "the message does not name the file: " << what;
    EXPECT_NE(what.find(fault), std::string::npos) << "expected '" << fault << "' in: " << what;
  }
}

}  // namespace lt::io::testing
