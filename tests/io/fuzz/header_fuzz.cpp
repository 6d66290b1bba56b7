// libFuzzer harness for the safetensors header parser (io/header_parser.hpp), compiled alone:
// no other part of lazytensor. Built and run by `./build.sh fuzz [SECONDS]` with clang.
// The first 8 bytes are the size of the data section the header must describe; the rest is
// the header's JSON. The parser must return a header or raise lt::Error; anything else (a
// crash, a sanitizer report, another exception) is a finding.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "lazytensor/io/header_parser.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 8) return 0;
  std::uint64_t data_bytes = 0;
  std::memcpy(&data_bytes, data, 8);
  data_bytes %= std::uint64_t{1} << 40;
  std::string_view json(reinterpret_cast<const char*>(data) + 8, size - 8);
  try {
    lt::io::Header h = lt::io::parse_header(json, data_bytes);
    // What the loader relies on: the tensors tile the data section, each as its shape needs.
    std::uint64_t at = 0;
    for (const lt::io::TensorEntry& e : h.tensors) {
      if (e.begin != at || e.end < e.begin) __builtin_trap();
      if (static_cast<std::uint64_t>(e.shape.numel()) * lt::itemsize(e.dtype) != e.bytes()) __builtin_trap();
      at = e.end;
    }
    if (at != data_bytes) __builtin_trap();
  } catch (const lt::Error&) {
  }
  return 0;
}
