#pragma once
// The safetensors header writer, defined once per program: included by the implementation
// (through io/definitions.hpp), never by a user's file.
#include <string>

#include <nlohmann/json.hpp>

#include "lazytensor/io/format.hpp"

namespace lt::io {

std::string format_header(const std::vector<TensorEntry>& tensors, const Metadata& metadata) {
  // ordered_json keeps insertion order: the reference writer puts "__metadata__" first and
  // the tensors in data order, each as dtype, shape, data_offsets.
  nlohmann::ordered_json root = nlohmann::ordered_json::object();
  if (!metadata.empty()) root["__metadata__"] = metadata;
  for (const TensorEntry& e : tensors) {
    LT_CHECK(e.name != "__metadata__", "save: a tensor may not be named __metadata__");
    LT_CHECK(!root.contains(e.name), "save: the tensor name '", e.name, "' appears twice");
    nlohmann::ordered_json info = nlohmann::ordered_json::object();
    info["dtype"] = std::string(safetensors_name(e.dtype));
    info["shape"] = e.shape.vec();
    info["data_offsets"] = {e.begin, e.end};
    root[e.name] = std::move(info);
  }
  std::string json;
  try {
    json = root.dump();
  } catch (const nlohmann::json::exception& e) {  // a name or a value that is not UTF-8
    fail("save: names and metadata must be UTF-8 text (", e.what(), ")");
  }
  json.append((8 - json.size() % 8) % 8, ' ');
  return json;
}

}  // namespace lt::io
