#pragma once
// save() and load(), defined once per program: included by the implementation (through
// io/definitions.hpp), never by a user's file.
#include <algorithm>
#include <cstring>
#include <set>
#include <tuple>
#include <vector>

#include "lazytensor/core/metrics.hpp"
#include "lazytensor/core/replica.hpp"
#include "lazytensor/io/posix_file.hpp"
#include "lazytensor/io/safetensors.hpp"
#include "lazytensor/ops/kernels/strided.hpp"
#include "lazytensor/runtime/api.hpp"
#include "lazytensor/trace/dispatch.hpp"

namespace lt {

namespace io::detail {

/// The bytes of `v` in row-major order, gathered into `out` (v is not contiguous).
inline void gather(const View& v, std::byte* out) {
  const std::size_t item = itemsize(v.dtype);
  const int rank = v.shape.rank();
  if (v.numel() == 0) return;
  // Runs along the last dim are copied whole where its stride is 1.
  const bool unit_last = rank > 0 && v.strides[rank - 1] == 1;
  const int outer = unit_last ? rank - 1 : rank;
  const std::size_t run = unit_last ? static_cast<std::size_t>(v.shape[rank - 1]) * item : item;
  std::int64_t index[max_rank] = {};
  while (true) {
    std::int64_t offset = 0;
    for (int d = 0; d < outer; ++d) offset += index[d] * v.strides[d];
    std::memcpy(out, v.data + offset * static_cast<std::int64_t>(item), run);
    out += run;
    int d = outer - 1;
    for (; d >= 0; --d) {
      if (++index[d] < v.shape[d]) break;
      index[d] = 0;
    }
    if (d < 0) return;
  }
}

/// The reference writer's data order: dtypes of larger rank first, then names.
inline std::vector<std::pair<std::string, Tensor>> data_order(const TensorMap& tensors) {
  std::vector<std::pair<std::string, Tensor>> order(tensors.begin(), tensors.end());
  std::stable_sort(order.begin(), order.end(), [](const auto& a, const auto& b) {
    return reference_writer_rank(a.second.dtype()) > reference_writer_rank(b.second.dtype());
  });
  return order;
}

/// Puts every lazy tensor's pending value in one barrier per device.
inline void settle(const TensorMap& tensors) {
  std::set<int> devices;
  for (auto& [name, t] : tensors)
    if (t.device().is_lazy()) devices.insert(t.device().index);
  for (int index : devices) sync(lazy(index));
}

inline std::uint64_t read_le64(const std::byte* p) {
  std::uint64_t n;
  std::memcpy(&n, p, 8);
  return n;  // the host is little-endian (format.hpp)
}

/// The header of a mapped file, checked against the file's size, and where its data starts.
inline std::pair<Header, std::uint64_t> read_header(const io::MappedFile& file) {
  const std::string& path = file.path();
  try {
    LT_CHECK(file.size() >= 8, "the file has ", file.size(), " bytes, fewer than the 8 of the header length");
    std::uint64_t n = read_le64(file.data());
    LT_CHECK(n <= max_header_bytes, "the header length ", n, " exceeds the format's limit of ", max_header_bytes);
    LT_CHECK(n <= file.size() - 8, "the header length ", n, " runs past the end of the file (", file.size(),
             " bytes; is it truncated?)");
    std::string_view json(reinterpret_cast<const char*>(file.data()) + 8, static_cast<std::size_t>(n));
    return {parse_header(json, file.size() - 8 - n), 8 + n};
  } catch (const Error& e) {
    fail("load: ", path, ": ", e.what());
  }
}

/// BOOL bytes are 0 or 1: any other byte would be an invalid C++ bool.
inline void check_booleans(const io::MappedFile& file, const TensorEntry& e, const std::byte* p) {
  for (std::uint64_t k = 0; k < e.bytes(); ++k)
    LT_CHECK(static_cast<unsigned char>(p[k]) <= 1, "load: ", file.path(), ": tensor '", e.name,
             "' (BOOL) holds the byte ", static_cast<unsigned>(static_cast<unsigned char>(p[k])), " at element ", k,
             " (BOOL values are 0 or 1)");
}

}  // namespace io::detail

void save(const TensorMap& tensors, const std::string& path, const Metadata& metadata, const SaveOptions& options) {
  if (options.master_only) {
    SaveOptions one = options;
    one.master_only = false;
    if (is_master_ordinal()) save(tensors, path, metadata, one);
    // A master that fails to write releases the others through the launch, with its error.
    rendezvous("lt::save " + path);
    return;
  }
  for (auto& [name, t] : tensors) LT_CHECK(t.defined(), "save: ", path, ": tensor '", name, "' is undefined");
  io::detail::settle(tensors);
  std::vector<std::pair<std::string, Tensor>> order = io::detail::data_order(tensors);
  std::vector<io::TensorEntry> entries;
  entries.reserve(order.size());
  std::uint64_t offset = 0;
  for (auto& [name, t] : order) {
    std::uint64_t bytes = static_cast<std::uint64_t>(t.numel()) * itemsize(t.dtype());
    entries.push_back({name, t.dtype(), t.shape(), offset, offset + bytes});
    offset += bytes;
  }
  std::string header;
  try {
    header = io::format_header(entries, metadata);
  } catch (const Error& e) {
    fail("save: ", path, ": ", e.what());
  }
  io::AtomicFileWriter file(path);
  std::uint64_t n = header.size();
  file.write(&n, 8);
  file.write(header.data(), header.size());
  std::vector<std::byte> scratch;
  for (auto& [name, t] : order) {
    Array a = materialize(t);  // waits for the step that computes it
    if (t.device().is_lazy()) metrics::counter_handle("TransferFromDevice").add();
    if (a.view.dtype != t.dtype()) {
      // Stored in another dtype than the program sees (bf16 storage): written as it sees it.
      Array seen = Array::empty(t.dtype(), a.view.shape);
      if (seen.view.numel() > 0) kernels::copy_into(a.view, seen.view);
      a = seen;
    }
    const std::size_t bytes = static_cast<std::size_t>(a.view.numel()) * itemsize(a.view.dtype);
    if (bytes == 0) continue;
    if (a.view.contiguous()) {
      file.write(a.view.data, bytes);
    } else {
      scratch.resize(bytes);
      io::detail::gather(a.view, scratch.data());
      file.write(scratch.data(), bytes);
    }
  }
  file.commit(options.durable);
}

SafetensorsContents load_with_metadata(const std::string& path, Device device, const LoadOptions& options) {
  auto file = std::make_shared<const io::MappedFile>(path);
  auto [header, data_start] = io::detail::read_header(*file);
  file->advise_sequential(data_start, file->size());
  SafetensorsContents out;
  out.metadata = std::move(header.metadata);
  // Every tensor is made before any is handed out: a fault in the data leaves nothing loaded.
  for (const io::TensorEntry& e : header.tensors) {
    std::byte* p = file->mutable_data() + data_start + e.begin;
    if (e.dtype == DType::boolean) io::detail::check_booleans(*file, e, p);
    Array a;
    const bool view = options.mmap && !device.is_lazy() &&
                      reinterpret_cast<std::uintptr_t>(p) % itemsize(e.dtype) == 0;
    if (view) {
      a.buffer = Buffer::adopt(std::shared_ptr<std::byte>(file, p), static_cast<std::size_t>(e.bytes()));
      a.view = View{p, e.dtype, e.shape, contiguous_strides(e.shape)};
    } else {
      a = Array::empty(e.dtype, e.shape);
      if (e.bytes() > 0) std::memcpy(a.view.data, p, static_cast<std::size_t>(e.bytes()));
    }
    if (device.is_lazy()) metrics::counter_handle("TransferToDevice").add();
    out.tensors.emplace(e.name, tensor_from_array(std::move(a), device));
  }
  return out;
}

TensorMap load(const std::string& path, Device device, const LoadOptions& options) {
  return load_with_metadata(path, device, options).tensors;
}

Metadata load_metadata(const std::string& path) {
  io::MappedFile file(path);
  return io::detail::read_header(file).first.metadata;
}

void load_into(nn::Module& module, const std::string& path) {
  TensorMap tensors = load(path, cpu);
  try {
    module.load_state_dict(tensors);
  } catch (const Error& e) {
    fail("load_into: ", path, ": ", e.what());
  }
}

}  // namespace lt
