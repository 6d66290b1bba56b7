#pragma once
// View: a typed, strided window on memory (what kernels read and write).
// Array: a View that keeps its Buffer alive (what a materialised tensor holds).
#include <cstdint>

#include "lazytensor/core/buffer.hpp"
#include "lazytensor/core/checked_size.hpp"
#include "lazytensor/core/dtype.hpp"
#include "lazytensor/core/shape.hpp"

namespace lt {

/// Non-owning. `data` points at element [0, ..., 0]; strides are in elements and may be 0
/// (broadcast). Kernels receive inputs as Views and write a contiguous output View.
struct View {
  std::byte* data = nullptr;
  DType dtype = DType::f32;
  Shape shape;
  Strides strides;
  bool wrapped_number = false;  // a C++ scalar operand: weakest in type promotion

  std::int64_t numel() const { return shape.numel(); }
  bool contiguous() const { return is_contiguous(shape, strides); }
  template <class T> T* ptr() const { return reinterpret_cast<T*>(data); }
  /// Offset in elements of a multi-index.
  std::int64_t offset(std::span<const std::int64_t> idx) const {
    std::int64_t o = 0;
    for (int i = 0; i < shape.rank(); ++i) o += idx[i] * strides[i];
    return o;
  }
};

/// Owning: a View plus the Buffer it points into.
struct Array {
  Buffer buffer;
  View view;

  /// A fresh contiguous array, uninitialised.
  static Array empty(DType t, const Shape& s) {
    Array a;
    a.buffer = Buffer(static_cast<std::size_t>(checked_bytes(s, itemsize(t), "an array")));
    a.view = View{a.buffer.data(), t, s, contiguous_strides(s)};
    return a;
  }
  /// Another view of the same buffer.
  Array alias(const View& v) const { return Array{buffer, v}; }
  bool defined() const { return static_cast<bool>(buffer); }
};

}  // namespace lt
