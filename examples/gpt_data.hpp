#pragma once
// The GPT example's text: Debian's fortunes as bytes, split into training and validation
// fortunes, and the windows a step trains on. benchmarks/peers/gpt_torch.py draws the same
// windows from the same split (the same splitmix64 stream), so both train on the same bytes.
#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <vector>

/// Where Debian's fortunes package puts its text.
inline constexpr const char* fortunes_directory = "/usr/share/games/fortunes";

/// The training and validation text.
struct GptText {
  std::string train, validation;
  std::size_t files = 0, fortunes = 0;
};

/// Every fortune file of `dir` (regular files without an extension: the .dat indexes and the
/// .u8 links are not text), in name order. Fortunes are separated by lines "%"; every tenth
/// fortune (the 10th, 20th, ...) is validation, the rest training, each kept with its "%" line.
inline GptText read_fortunes(const std::string& dir) {
  namespace fs = std::filesystem;
  std::vector<fs::path> files;
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec))
    if (e.is_regular_file() && !e.is_symlink() && !e.path().has_extension()) files.push_back(e.path());
  if (ec) throw std::runtime_error("cannot list " + dir + ": " + ec.message());
  std::sort(files.begin(), files.end());
  GptText text;
  for (const fs::path& path : files) {
    std::ifstream in(path, std::ios::binary);
    std::string body((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (!in && !in.eof()) throw std::runtime_error("cannot read " + path.string());
    ++text.files;
    std::size_t start = 0;
    while (start < body.size()) {
      std::size_t end = body.find("\n%\n", start);
      end = end == std::string::npos ? body.size() : end + 3;
      std::string& to = (++text.fortunes % 10 == 0) ? text.validation : text.train;
      to.append(body, start, end - start);
      start = end;
    }
  }
  if (text.train.empty() || text.validation.empty()) throw std::runtime_error("no fortunes in " + dir);
  return text;
}

/// splitmix64: a small generator that C++ and Python compute alike.
struct SplitMix64 {
  std::uint64_t state;
  std::uint64_t next() {
    std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
};

/// Inputs and targets of `batch` windows of `context` bytes at `starts`: targets are the inputs
/// shifted by one byte.
inline void windows_at(const std::string& text, const std::vector<std::uint64_t>& starts, std::int64_t context,
                       std::vector<std::int64_t>& x, std::vector<std::int64_t>& y) {
  x.clear();
  y.clear();
  for (std::uint64_t s : starts)
    for (std::int64_t t = 0; t < context; ++t) {
      x.push_back(static_cast<unsigned char>(text[s + static_cast<std::uint64_t>(t)]));
      y.push_back(static_cast<unsigned char>(text[s + static_cast<std::uint64_t>(t) + 1]));
    }
}

/// `batch` random window starts in text of `size` bytes (next() % (size - context)).
inline std::vector<std::uint64_t> random_starts(SplitMix64& rng, std::size_t size, std::int64_t batch,
                                                std::int64_t context) {
  std::vector<std::uint64_t> starts;
  for (std::int64_t b = 0; b < batch; ++b) starts.push_back(rng.next() % (size - static_cast<std::uint64_t>(context)));
  return starts;
}

/// `count` window starts spread evenly over text of `size` bytes: the validation windows.
inline std::vector<std::uint64_t> even_starts(std::size_t size, std::int64_t count, std::int64_t context) {
  std::vector<std::uint64_t> starts;
  const std::uint64_t last = size - static_cast<std::uint64_t>(context) - 1;
  for (std::int64_t i = 0; i < count; ++i)
    starts.push_back(count == 1 ? 0 : last * static_cast<std::uint64_t>(i) / static_cast<std::uint64_t>(count - 1));
  return starts;
}
