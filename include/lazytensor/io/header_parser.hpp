#pragma once
// The safetensors header parser, defined once per program: included by the implementation
// (through io/definitions.hpp) and by the fuzz harness, never by a user's file. nlohmann-json
// parses; every value is then checked before anything is computed from it.
#include <algorithm>
#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include "lazytensor/io/format.hpp"

namespace lt::io {

namespace detail {

/// Tensor objects sit at depth 1, their shapes and offsets at depth 2: nothing deeper is valid.
inline constexpr int max_header_depth = 2;

/// Quotes a name for a message, cut short where a corrupt header holds a very long one.
inline std::string quote_name(std::string_view name) {
  constexpr std::size_t limit = 80;
  if (name.size() <= limit) return "'" + std::string(name) + "'";
  return "'" + std::string(name.substr(0, limit)) + "...' (" + std::to_string(name.size()) + " bytes)";
}

/// Parses `json`, refusing a key repeated within one object (the DOM keeps one of them
/// silently) and nesting deeper than a header has.
inline nlohmann::json parse_unique_keys(std::string_view json) {
  std::vector<std::set<std::string>> open;  // the keys seen in each enclosing object
  int open_arrays = 0;
  auto check = [&](int depth, nlohmann::json::parse_event_t event, nlohmann::json& value) {
    using E = nlohmann::json::parse_event_t;
    switch (event) {
      case E::object_start:
      case E::array_start:
        LT_CHECK(depth <= max_header_depth, "header: values nest deeper than a header's (depth ", depth, ")");
        if (event == E::object_start) open.emplace_back();
        else ++open_arrays;
        break;
      case E::object_end: open.pop_back(); break;
      case E::array_end: --open_arrays; break;
      case E::key:
        LT_CHECK(open.back().insert(value.get_ref<const std::string&>()).second, "header: the key ",
                 quote_name(value.get_ref<const std::string&>()), " appears twice",
                 depth == 1 ? " (a duplicate tensor name)" : "");
        break;
      case E::value: break;
    }
    return true;
  };
  try {
    return nlohmann::json::parse(json.begin(), json.end(), check);
  } catch (const nlohmann::json::exception& e) {
    fail("header: not valid JSON (", e.what(), ")");
  }
}

inline std::uint64_t unsigned_value(const nlohmann::json& v, std::string_view tensor, std::string_view what) {
  LT_CHECK(v.is_number_unsigned(), "header: tensor ", quote_name(tensor), ": ", what,
           " must be non-negative integers, got ", v.dump());
  return v.get<std::uint64_t>();
}

inline TensorEntry parse_tensor(const std::string& name, const nlohmann::json& info, std::uint64_t data_bytes) {
  const std::string q = quote_name(name);
  LT_CHECK(info.is_object(), "header: tensor ", q, " must be an object, got ", info.type_name());
  for (auto& [key, value] : info.items())
    LT_CHECK(key == "dtype" || key == "shape" || key == "data_offsets", "header: tensor ", q, ": unknown field ",
             quote_name(key));
  for (const char* field : {"dtype", "shape", "data_offsets"})
    LT_CHECK(info.contains(field), "header: tensor ", q, " has no \"", field, "\"");
  TensorEntry e;
  e.name = name;

  const nlohmann::json& dtype = info["dtype"];
  LT_CHECK(dtype.is_string(), "header: tensor ", q, ": dtype must be a string, got ", dtype.dump());
  const auto& dtype_name = dtype.get_ref<const std::string&>();
  std::optional<DType> t = dtype_from_safetensors_name(dtype_name);
  if (!t && is_other_safetensors_dtype(dtype_name))
    fail("header: tensor ", q, " has dtype ", dtype_name,
         ", which lazytensor does not hold (it reads F32, F64, BF16, F16, I32, I64 and BOOL)");
  LT_CHECK(t.has_value(), "header: tensor ", q, " has an unknown dtype ", quote_name(dtype_name));
  e.dtype = *t;

  const nlohmann::json& shape = info["shape"];
  LT_CHECK(shape.is_array(), "header: tensor ", q, ": shape must be an array, got ", shape.type_name());
  LT_CHECK(shape.size() <= static_cast<std::size_t>(max_rank), "header: tensor ", q, " has rank ", shape.size(),
           "; lazytensor holds ranks 0 to ", max_rank);
  std::uint64_t numel = 1;
  for (const nlohmann::json& extent : shape) {
    std::uint64_t n = unsigned_value(extent, name, "shape extents");
    LT_CHECK(n <= static_cast<std::uint64_t>(INT64_MAX) && !__builtin_mul_overflow(numel, n, &numel) &&
                 numel <= static_cast<std::uint64_t>(INT64_MAX),
             "header: tensor ", q, ": the element count of shape ", shape.dump(), " overflows");
    e.shape.push_back(static_cast<std::int64_t>(n));
  }
  std::uint64_t bytes = 0;
  LT_CHECK(!__builtin_mul_overflow(numel, std::uint64_t{itemsize(e.dtype)}, &bytes), "header: tensor ", q,
           ": the byte count of shape ", shape.dump(), " overflows");

  const nlohmann::json& offsets = info["data_offsets"];
  LT_CHECK(offsets.is_array() && offsets.size() == 2, "header: tensor ", q,
           ": data_offsets must be [begin, end], got ", offsets.dump());
  e.begin = unsigned_value(offsets[0], name, "data_offsets");
  e.end = unsigned_value(offsets[1], name, "data_offsets");
  LT_CHECK(e.begin <= e.end, "header: tensor ", q, ": data_offsets [", e.begin, ", ", e.end, "] end before they begin");
  LT_CHECK(e.end <= data_bytes, "header: tensor ", q, ": data_offsets [", e.begin, ", ", e.end,
           "] run past the data section (", data_bytes, " bytes; is the file truncated?)");
  LT_CHECK(e.bytes() == bytes, "header: tensor ", q, ": data_offsets [", e.begin, ", ", e.end, "] hold ", e.bytes(),
           " bytes, but ", safetensors_name(e.dtype), " ", e.shape, " needs ", bytes);
  return e;
}

/// The ranges must tile [0, data_bytes): sorted by offset, each starts where the one before ends.
inline void check_tiling(std::vector<TensorEntry>& tensors, std::uint64_t data_bytes) {
  std::sort(tensors.begin(), tensors.end(),
            [](const TensorEntry& a, const TensorEntry& b) { return std::tie(a.begin, a.end) < std::tie(b.begin, b.end); });
  std::uint64_t at = 0;
  const TensorEntry* before = nullptr;
  for (const TensorEntry& e : tensors) {
    LT_CHECK(e.begin >= at, "header: tensors ", quote_name(before->name), " [", before->begin, ", ", before->end, "] and ",
             quote_name(e.name), " [", e.begin, ", ", e.end, "] overlap");
    LT_CHECK(e.begin == at, "header: the data section has a gap of ", e.begin - at, " bytes before tensor ",
             quote_name(e.name), " (the format forbids gaps)");
    at = e.end;
    before = &e;
  }
  LT_CHECK(at == data_bytes, "header: the data section holds ", data_bytes, " bytes but the tensors end at ", at,
           " (trailing bytes the format forbids)");
}

}  // namespace detail

Header parse_header(std::string_view json, std::uint64_t data_bytes) {
  nlohmann::json root = detail::parse_unique_keys(json);
  LT_CHECK(root.is_object(), "header: must be a JSON object, got ", root.type_name());
  Header h;
  for (auto& [name, value] : root.items()) {
    if (name == "__metadata__") {
      LT_CHECK(value.is_object(), "header: __metadata__ must be an object of strings, got ", value.type_name());
      for (auto& [key, text] : value.items()) {
        LT_CHECK(text.is_string(), "header: __metadata__ value of ", detail::quote_name(key), " must be a string, got ",
                 text.type_name());
        h.metadata.emplace(key, text.get<std::string>());
      }
    } else {
      h.tensors.push_back(detail::parse_tensor(name, value, data_bytes));
    }
  }
  detail::check_tiling(h.tensors, data_bytes);
  return h;
}

}  // namespace lt::io
