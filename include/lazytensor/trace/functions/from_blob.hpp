#pragma once
// lt::from_blob: a cpu tensor over memory the caller owns, without a copy (torch::from_blob).
#include <cstdint>
#include <functional>
#include <memory>
#include <utility>

#include "lazytensor/core/checked_size.hpp"
#include "lazytensor/trace/dispatch.hpp"

namespace lt {

/// What from_blob calls on the memory once the last tensor viewing it is gone.
using BlobDeleter = std::function<void(void*)>;

namespace detail {
inline Tensor from_blob_impl(void* data, const Shape& shape, const Strides& strides, BlobDeleter deleter, DType dtype) {
  LT_CHECK(data != nullptr, "from_blob: data is null (shape ", shape, ")");
  LT_CHECK(strides.rank() == shape.rank(), "from_blob: ", strides.rank(), " strides for shape ", shape, " of rank ",
           shape.rank());
  const std::int64_t numel = checked_numel(shape, "from_blob");
  const std::size_t item = itemsize(dtype);
  LT_CHECK(reinterpret_cast<std::uintptr_t>(data) % item == 0, "from_blob: data at ", data, " is not aligned to ", item,
           " bytes, as ", name(dtype), " elements must be");
  // The elements reached span [0, 1 + sum((extent - 1) * stride)): the bytes the storage covers.
  std::int64_t span = numel > 0 ? 1 : 0;
  for (int d = 0; d < shape.rank(); ++d) {
    LT_CHECK(strides[d] >= 0, "from_blob: negative stride ", strides[d], " (strides ", strides, ")");
    if (numel > 0) span = checked_add(span, checked_mul(shape[d] - 1, strides[d], "from_blob"), "from_blob");
  }
  const std::int64_t bytes = checked_mul(span, static_cast<std::int64_t>(item), "from_blob");
  LT_CHECK(static_cast<std::uint64_t>(bytes) <= Buffer::max_bytes, "from_blob: ", bytes, " bytes is more than a buffer spans");
  auto* p = static_cast<std::byte*>(data);
  // The buffer's last copy runs the deleter once; without one, the caller keeps the memory.
  std::shared_ptr<std::byte> owner =
      deleter ? std::shared_ptr<std::byte>(p, [d = std::move(deleter)](std::byte* q) { d(q); })
              : std::shared_ptr<std::byte>(p, [](std::byte*) {});
  Array a;
  a.buffer = Buffer::adopt(std::move(owner), static_cast<std::size_t>(bytes));
  a.view = View{p, dtype, shape, strides};
  return tensor_from_array(std::move(a), cpu);
}
// Row-major strides once the shape's element count is known to fit.
inline Strides blob_strides(const Shape& shape) {
  (void)checked_numel(shape, "from_blob");
  return contiguous_strides(shape);
}
}  // namespace detail

/// A cpu tensor of `dtype` viewing the memory at `data` with `shape` and element `strides`:
/// nothing is copied, and reads see what the memory holds (the library never writes it: ops,
/// and in-place ops too, make new storage). Without a deleter the caller keeps the memory alive
/// while any tensor viewing it (views, detached copies, saved autograd values) lives. `data`
/// must be non-null and aligned to the dtype; strides are non-negative. Moving the tensor to a
/// lazy device (`from_blob(...).to(lt::device())`) copies the memory once, into a device data
/// leaf: later writes to it do not reach the device value.
inline Tensor from_blob(void* data, Shape shape, Strides strides, DType dtype = f32) {
  return detail::from_blob_impl(data, shape, strides, {}, dtype);
}
/// As from_blob(data, shape, strides, dtype), with contiguous (row-major) strides.
inline Tensor from_blob(void* data, Shape shape, DType dtype = f32) {
  return detail::from_blob_impl(data, shape, detail::blob_strides(shape), {}, dtype);
}
/// As from_blob(data, shape, strides, dtype), the tensor's storage owning the memory: it
/// calls `deleter(data)` once, when the last tensor viewing the memory is gone.
inline Tensor from_blob(void* data, Shape shape, Strides strides, BlobDeleter deleter, DType dtype = f32) {
  return detail::from_blob_impl(data, shape, strides, std::move(deleter), dtype);
}
/// As from_blob(data, shape, dtype), the tensor's storage owning the memory through `deleter`.
inline Tensor from_blob(void* data, Shape shape, BlobDeleter deleter, DType dtype = f32) {
  return detail::from_blob_impl(data, shape, detail::blob_strides(shape), std::move(deleter), dtype);
}

}  // namespace lt
