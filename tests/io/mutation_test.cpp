// Corrupted variants of valid files, fed to the loader: each loads or raises lt::Error, never
// anything else and never a crash. The seed is printed; LT_MUTATION_SEED replays a run.
#include <cstdlib>
#include <iostream>
#include <random>

#include "io_test_support.hpp"

namespace lt::io::testing {
namespace {

constexpr int variants = 20'000;

class Mutator {
 public:
  explicit Mutator(std::uint64_t seed) : random_(seed) {}

  Bytes mutate(Bytes b) {
    const std::size_t header_end = b.size() < 8 ? 8 : std::min<std::size_t>(b.size(), 8 + header_length(b));
    std::size_t kind = below(9);
    if (b.size() < 8 && kind >= 4) kind = 3;  // too short to hold a header: grow it instead
    switch (kind) {
      case 0: if (!b.empty()) b[below(b.size())] ^= static_cast<std::uint8_t>(1u << below(8)); break;
      case 1: if (!b.empty()) b[below(b.size())] = static_cast<std::uint8_t>(below(256)); break;
      case 2: b.resize(below(b.size() + 1)); break;
      case 3: for (std::size_t n = 1 + below(16); n > 0; --n) b.push_back(static_cast<std::uint8_t>(below(256))); break;
      case 4: if (header_end > 8) b.erase(b.begin() + static_cast<std::ptrdiff_t>(8 + below(header_end - 8))); break;
      case 5: b.insert(b.begin() + static_cast<std::ptrdiff_t>(8 + below(header_end - 7)), token()[0]); break;
      case 6: replace_number(b, header_end); break;
      case 7: b[below(8)] = static_cast<std::uint8_t>(below(256)); break;
      case 8: splice_token(b, header_end); break;
    }
    // Half the header edits keep the length field true, so that the JSON itself is reached.
    if (b.size() >= 8 && below(2) == 0 && header_length(b) != b.size() - 8) {
      std::uint64_t n = std::min<std::uint64_t>(header_length(b), b.size() - 8);
      std::size_t text_end = 8 + static_cast<std::size_t>(n);
      while (text_end < b.size() && b[text_end] != 0 && b[text_end - 1] != '}') ++text_end;
      set_header_length(b, text_end - 8);
    }
    return b;
  }

 private:
  std::size_t below(std::size_t n) { return n == 0 ? 0 : std::uniform_int_distribution<std::size_t>(0, n - 1)(random_); }
  static std::uint64_t header_length(const Bytes& b) {
    std::uint64_t n = 0;
    for (int k = 7; k >= 0 && b.size() >= 8; --k) n = n << 8 | b[static_cast<std::size_t>(k)];
    return n;
  }
  static void set_header_length(Bytes& b, std::uint64_t n) {
    for (int k = 0; k < 8; ++k) b[static_cast<std::size_t>(k)] = static_cast<std::uint8_t>(n >> (8 * k));
  }
  std::string token() {
    static const char* tokens[] = {"{", "}", "[", "]", "\"", ",", ":", "0", "-1", "1e999", "18446744073709551615",
                                   "4294967296", "null", "true", "\"F16\"", "\"U8\"", "\"BOOL\"", "\"__metadata__\"", "\\u0000",
                                   "[0,0]", "[[[[1]]]]", "\xff", " "};
    return tokens[below(std::size(tokens))];
  }
  void replace_number(Bytes& b, std::size_t header_end) {
    if (header_end <= 8) return;
    std::size_t at = 8 + below(header_end - 8);
    while (at < header_end && !(b[at] >= '0' && b[at] <= '9')) ++at;
    std::size_t end = at;
    while (end < header_end && b[end] >= '0' && b[end] <= '9') ++end;
    std::string t = token();
    b.erase(b.begin() + static_cast<std::ptrdiff_t>(at), b.begin() + static_cast<std::ptrdiff_t>(end));
    b.insert(b.begin() + static_cast<std::ptrdiff_t>(at), t.begin(), t.end());
  }
  void splice_token(Bytes& b, std::size_t header_end) {
    if (header_end <= 8) return;
    std::size_t at = 8 + below(header_end - 8), len = below(std::min<std::size_t>(12, header_end - at) + 1);
    std::string t = token();
    b.erase(b.begin() + static_cast<std::ptrdiff_t>(at), b.begin() + static_cast<std::ptrdiff_t>(at + len));
    b.insert(b.begin() + static_cast<std::ptrdiff_t>(at), t.begin(), t.end());
  }

  std::mt19937_64 random_;
};

std::uint64_t mutation_seed() {
  if (const char* s = std::getenv("LT_MUTATION_SEED")) return std::strtoull(s, nullptr, 10);
  return std::random_device{}();
}

TEST(Mutation, CorruptedFilesLoadOrRaiseLtError) {
  const std::uint64_t seed = mutation_seed();
  std::cout << "mutation seed: " << seed << " (LT_MUTATION_SEED=" << seed << " replays it)\n";
  SCOPED_TRACE("LT_MUTATION_SEED=" + std::to_string(seed));
  ScratchDir dir;
  save({{"w", patterned(DType::f32, {3, 4}, 1)}, {"b", patterned(DType::bf16, {4}, 2)},
        {"m", patterned(DType::boolean, {5}, 3)}, {"n", patterned(DType::i64, {}, 4)}, {"e", patterned(DType::f64, {0}, 5)}},
       dir / "saved.safetensors", {{"format", "pt"}, {"epoch", "3"}});
  std::vector<Bytes> bases{read_bytes(dir / "saved.safetensors"),
                           read_bytes(std::string(LT_IO_FIXTURES) + "/mixed.safetensors"),
                           read_bytes(std::string(LT_IO_FIXTURES) + "/attn.safetensors"),
                           read_bytes(std::string(LT_IO_FIXTURES) + "/empty_with_metadata.safetensors")};
  Mutator mutator(seed);
  int loaded = 0, refused = 0;
  for (int k = 0; k < variants; ++k) {
    // A new file each time: ext4 flushes a file rewritten in place when it is closed.
    const std::string path = dir / ("variant" + std::to_string(k) + ".safetensors");
    Bytes variant = mutator.mutate(bases[static_cast<std::size_t>(k) % bases.size()]);
    if (k % 7 == 0) variant = mutator.mutate(variant);  // some take two mutations
    write_bytes(path, variant);
    try {
      TensorMap tensors = load(path, cpu, {.mmap = k % 2 == 0});
      std::size_t bytes = 0;
      for (auto& [name, t] : tensors) bytes += raw_bytes(t).size();  // reads every byte it claims
      ASSERT_LE(bytes, variant.size()) << "variant " << k;
      ++loaded;
    } catch (const Error& e) {
      ASSERT_NE(std::string(e.what()).find(path), std::string::npos) << "variant " << k << ": " << e.what();
      ++refused;
    } catch (const std::exception& e) {
      FAIL() << "variant " << k << " raised something other than lt::Error: " << e.what();
    }
    std::filesystem::remove(path);
  }
  std::cout << variants << " variants: " << loaded << " loaded, " << refused << " refused\n";
  EXPECT_EQ(loaded + refused, variants);
  EXPECT_GT(refused, variants / 2);
  EXPECT_GT(loaded, 0);  // some corruptions hit tensor data only
}

}  // namespace
}  // namespace lt::io::testing
