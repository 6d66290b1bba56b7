#pragma once
// The IDX format of MNIST-style data sets: a magic number (two zero bytes, an element type
// code, a dims count), the extents as big-endian u32, then the elements, big-endian and
// row-major. Files may be gzip-compressed. Nothing in a file is trusted: every field is
// checked before use, and a bad file raises lt::Error naming the file and what is wrong.
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <span>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "lazytensor/core/checked_size.hpp"
#include "lazytensor/data/file.hpp"
#include "lazytensor/data/gzip.hpp"
#include "lazytensor/trace/dispatch.hpp"
#include "lazytensor/trace/tensor.hpp"

namespace lt::data {

/// Element types of IDX files; the value is the code the magic number carries.
enum class IdxType : std::uint8_t { u8 = 0x08, i8 = 0x09, i16 = 0x0B, i32 = 0x0C, f32 = 0x0D, f64 = 0x0E };

constexpr std::string_view name(IdxType t) {
  switch (t) {
    case IdxType::u8: return "u8";
    case IdxType::i8: return "i8";
    case IdxType::i16: return "i16";
    case IdxType::i32: return "i32";
    case IdxType::f32: return "f32";
    case IdxType::f64: return "f64";
  }
  return "?";
}

constexpr std::size_t element_size(IdxType t) {
  switch (t) {
    case IdxType::u8:
    case IdxType::i8: return 1;
    case IdxType::i16: return 2;
    case IdxType::i32:
    case IdxType::f32: return 4;
    case IdxType::f64: return 8;
  }
  return 0;
}

/// The contents of an IDX file, checked: `dims` and `type` describe exactly the bytes of
/// `elements()`.
class IdxArray {
 public:
  /// The element type stored in the file.
  IdxType type() const { return type_; }
  /// The extents, outermost first.
  const std::vector<std::int64_t>& dims() const { return dims_; }
  /// The number of elements: the product of dims().
  std::int64_t count() const { return count_; }
  /// The elements as stored: big-endian, row-major.
  std::span<const std::uint8_t> elements() const { return std::span(bytes_).subspan(offset_); }
  /// Element `i` as a double (exact for every IDX type).
  double at(std::int64_t i) const;

  /// Checks and takes the bytes of an IDX file.
  static IdxArray parse(std::vector<std::uint8_t> bytes);

 private:
  IdxType type_ = IdxType::u8;
  std::vector<std::int64_t> dims_;
  std::int64_t count_ = 0;
  std::vector<std::uint8_t> bytes_;
  std::size_t offset_ = 0;
};

namespace detail {
inline std::uint64_t read_be(const std::uint8_t* p, std::size_t n) {
  std::uint64_t v = 0;
  for (std::size_t k = 0; k < n; ++k) v = v << 8 | p[k];
  return v;
}
/// "[60000, 28, 28]"
inline std::string dims_text(const std::vector<std::int64_t>& dims) {
  std::string s = "[";
  for (std::size_t k = 0; k < dims.size(); ++k) s += (k ? ", " : "") + std::to_string(dims[k]);
  return s + "]";
}
}  // namespace detail

inline IdxArray IdxArray::parse(std::vector<std::uint8_t> bytes) {
  const std::size_t size = bytes.size();
  if (size < 4) fail("IDX: ", size, " bytes are too few for the 4-byte magic number");
  if (bytes[0] != 0 || bytes[1] != 0)
    fail("IDX: bad magic number ", detail::read_be(bytes.data(), 4), " (an IDX file starts with two zero bytes)");
  const std::uint8_t code = bytes[2];
  if (code != 0x08 && code != 0x09 && code != 0x0B && code != 0x0C && code != 0x0D && code != 0x0E)
    fail("IDX: unknown element type code ", int{code});
  const std::size_t rank = bytes[3];
  if (rank < 1 || rank > static_cast<std::size_t>(max_rank))
    fail("IDX: the magic number gives ", rank, " dims; supported are 1 to ", max_rank);
  const std::size_t header = 4 + 4 * rank;
  if (size < header) fail("IDX: the header of ", rank, " dims needs ", header, " bytes, the file has ", size);

  IdxArray a;
  a.type_ = static_cast<IdxType>(code);
  const std::size_t item = element_size(a.type_);
  // The payload bounds the element count, so an extent that cannot fit is caught before any
  // product overflows.
  const std::uint64_t room = (size - header) / item;
  std::uint64_t count = 1;
  for (std::size_t k = 0; k < rank; ++k) {
    std::uint64_t extent = detail::read_be(bytes.data() + 4 + 4 * k, 4);
    a.dims_.push_back(static_cast<std::int64_t>(extent));
    if (extent != 0 && count > room / extent) count = room + 1;  // already more than the file holds
    else count *= extent;
  }
  const std::uint64_t payload = size - header;
  if (count > room || count * item != payload) {
    if (count > room)
      fail("IDX: the header promises ", name(a.type_), " ", detail::dims_text(a.dims_), " but only ", payload,
           " bytes of elements follow (truncated or corrupt)");
    fail("IDX: ", payload - count * item, " bytes follow the last element of ", name(a.type_), " ",
         detail::dims_text(a.dims_));
  }
  // An empty array's other extents still make its strides: they must fit as well.
  try {
    checked_numel(Shape(a.dims_), "extents");
  } catch (const Error& e) {
    fail("IDX: ", detail::dims_text(a.dims_), ": ", e.what());
  }
  a.count_ = static_cast<std::int64_t>(count);
  a.bytes_ = std::move(bytes);
  a.offset_ = header;
  return a;
}

inline double IdxArray::at(std::int64_t i) const {
  const std::size_t item = element_size(type_);
  const std::uint8_t* p = bytes_.data() + offset_ + static_cast<std::size_t>(i) * item;
  const std::uint64_t raw = detail::read_be(p, item);
  switch (type_) {
    case IdxType::u8: return static_cast<double>(raw);
    case IdxType::i8: return static_cast<std::int8_t>(raw);
    case IdxType::i16: return static_cast<std::int16_t>(raw);
    case IdxType::i32: return static_cast<std::int32_t>(raw);
    case IdxType::f32: return std::bit_cast<float>(static_cast<std::uint32_t>(raw));
    case IdxType::f64: return std::bit_cast<double>(raw);
  }
  return 0;
}

/// The IDX file at `path`, gzip-compressed or not (told by its first bytes, not its name).
inline IdxArray read_idx(const std::filesystem::path& path) {
  std::vector<std::uint8_t> bytes = read_file(path);
  try {
    if (is_gzip(bytes)) bytes = gunzip(bytes);
    return IdxArray::parse(std::move(bytes));
  } catch (const Error& e) {
    fail(path, ": ", e.what());
  }
}

/// All elements as a cpu tensor of `dtype` and the file's extents.
inline Tensor to_tensor(const IdxArray& a, DType dtype) {
  Array out = Array::empty(dtype, Shape(a.dims()));
  visit(dtype, [&]<class T>(Tag<T>) {
    T* p = out.view.ptr<T>();
    for (std::int64_t i = 0; i < a.count(); ++i) {
      const double v = a.at(i);
      if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
        // NaN, infinities and values past T's range have no integer (the cast would be undefined).
        constexpr double limit = static_cast<double>(std::numeric_limits<T>::max()) + 1.0;  // 2^(bits - 1), exact
        const double whole = std::trunc(v);
        if (!(whole >= -limit && whole < limit)) fail("IDX: element ", i, " (", v, ") does not fit ", name(dtype));
      }
      p[i] = static_cast<T>(v);
    }
  });
  return tensor_from_array(std::move(out), cpu);
}

/// An IDX file of u8 images [count, rows, columns] as f32 [count, 1, rows, columns], each
/// pixel divided by 255 (values in [0, 1], as torchvision's ToTensor gives them).
inline Tensor read_idx_images(const std::filesystem::path& path) {
  IdxArray a = read_idx(path);
  if (a.type() != IdxType::u8 || a.dims().size() != 3)
    fail(path, ": expected u8 images [count, rows, columns], found ", name(a.type()), " ", detail::dims_text(a.dims()));
  Array out = Array::empty(f32, Shape{a.dims()[0], 1, a.dims()[1], a.dims()[2]});
  float* p = out.view.ptr<float>();
  std::span<const std::uint8_t> pixels = a.elements();
  for (std::size_t i = 0; i < pixels.size(); ++i) p[i] = static_cast<float>(pixels[i]) / 255.0f;
  return tensor_from_array(std::move(out), cpu);
}

/// An IDX file of u8 labels [count] as i64 [count].
inline Tensor read_idx_labels(const std::filesystem::path& path) {
  IdxArray a = read_idx(path);
  if (a.type() != IdxType::u8 || a.dims().size() != 1)
    fail(path, ": expected u8 labels [count], found ", name(a.type()), " ", detail::dims_text(a.dims()));
  return to_tensor(a, i64);
}

}  // namespace lt::data
