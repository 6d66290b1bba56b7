#pragma once
// Whole files into memory, with errors that name the file.
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>
#include <vector>

#include "lazytensor/core/error.hpp"

namespace lt::data {

/// The bytes of the file at `path`. A missing, unreadable or short file raises lt::Error.
inline std::vector<std::uint8_t> read_file(const std::filesystem::path& path) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (!std::filesystem::exists(status)) fail(path, ": no such file");
  if (!std::filesystem::is_regular_file(status)) fail(path, ": not a regular file");
  const std::uintmax_t size = std::filesystem::file_size(path, ec);
  if (ec) fail(path, ": cannot read its size (", ec.message(), ")");
  std::ifstream file(path, std::ios::binary);
  if (!file) fail(path, ": cannot open (", std::strerror(errno), ")");
  std::vector<std::uint8_t> bytes(static_cast<std::size_t>(size));
  file.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(size));
  if (static_cast<std::uintmax_t>(file.gcount()) != size)
    fail(path, ": read ", file.gcount(), " of its ", size, " bytes");
  return bytes;
}

}  // namespace lt::data
