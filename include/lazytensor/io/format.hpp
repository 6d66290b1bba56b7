#pragma once
// The safetensors format (https://github.com/huggingface/safetensors): an 8-byte little-endian
// header length N, N bytes of JSON mapping each tensor's name to its dtype, shape and
// data_offsets (relative to the data that follows the header), an optional "__metadata__" of
// strings, then the raw little-endian tensor bytes, contiguous, with no gaps.
//
// What a header holds once checked, and the dtypes' names. Depends on core/ only, so that the
// parser compiles on its own (the fuzz harness builds nothing else).
#include <bit>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lazytensor/core/dtype.hpp"
#include "lazytensor/core/shape.hpp"

namespace lt::io {

static_assert(std::endian::native == std::endian::little, "safetensors data is little-endian; so must the host be");

/// String metadata ("__metadata__"): free-form keys and values.
using Metadata = std::map<std::string, std::string>;

/// Headers larger than this are refused, as the reference reader does (100 MB).
inline constexpr std::uint64_t max_header_bytes = 100'000'000;

/// safetensors' name of a lazytensor dtype: F32, F64, BF16, F16, I32, I64, BOOL.
constexpr std::string_view safetensors_name(DType t) { return is_dtype(t) ? dtype_info(t).safetensors : "?"; }

/// The dtype named `name` in a header, or nullopt where lazytensor has no such dtype.
inline std::optional<DType> dtype_from_safetensors_name(std::string_view name) {
  for (const DTypeInfo& d : dtype_table)
    if (d.safetensors == name) return d.dtype;
  return std::nullopt;
}

/// Whether `name` is a dtype of the format that lazytensor does not hold (U8, F8_E4M3, ...), as
/// opposed to a name the format does not know at all.
inline bool is_other_safetensors_dtype(std::string_view name) {
  for (std::string_view other : {"F8_E4M3", "F8_E5M2", "F8_E8M0", "F6_E2M3", "F6_E3M2", "F4", "I8", "U8",
                                  "I16", "U16", "U32", "U64", "C64"})
    if (name == other) return true;
  return false;
}

/// Rank of a dtype in the reference writer's data order: it sorts tensors by this, largest
/// first (its Dtype enum order), then by name.
constexpr int reference_writer_rank(DType t) { return is_dtype(t) ? dtype_info(t).reference_writer_rank : -1; }

/// One tensor of a header, checked: its bytes are [begin, end) of the data section and hold
/// exactly numel * itemsize bytes.
struct TensorEntry {
  std::string name;
  DType dtype = DType::f32;
  Shape shape;
  std::uint64_t begin = 0, end = 0;
  std::uint64_t bytes() const { return end - begin; }
};

/// A checked header: entries in data order (by begin), which tile the data section exactly.
struct Header {
  std::vector<TensorEntry> tensors;
  Metadata metadata;
};

/// Parses and checks the JSON of a header against a data section of `data_bytes` bytes: an
/// object whose keys are unique; "__metadata__" an object of strings; every other key a tensor
/// with exactly a known "dtype", a "shape" of at most 8 non-negative extents whose byte count
/// does not overflow, and "data_offsets" [begin, end] that match the shape; the tensors'
/// ranges neither overlap nor leave gaps and end exactly at `data_bytes`. Raises lt::Error
/// naming the fault (the caller adds the file). Defined in io/header_parser.hpp.
Header parse_header(std::string_view json, std::uint64_t data_bytes);

/// The header JSON the reference writer makes for `tensors` (in data order) and `metadata`:
/// "__metadata__" first, then each tensor's dtype, shape and data_offsets, padded with spaces
/// to a multiple of 8 bytes. Defined in io/header_writer.hpp.
std::string format_header(const std::vector<TensorEntry>& tensors, const Metadata& metadata);

}  // namespace lt::io
