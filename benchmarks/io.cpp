// Saving and loading a 1 GiB state dict of many tensors of mixed sizes, from and to the lazy
// device, in GB/s beside the same run's plain write() + fsync() and read() of the same bytes
// (the limits: what the file system gives a program that does nothing else), timed in turns.
// Also the peak resident memory that saving adds, against the largest tensor.
//     bench_io [DIR]   (default: the system's temporary directory; needs 2 GiB free)
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <lazytensor/io.hpp>
#include <lazytensor/lazytensor.hpp>

#include "common/timing.hpp"

namespace {

constexpr std::size_t total_bytes = std::size_t{1} << 30;

/// Tensors of 64 MiB down to 4 KiB, about half the bytes in the largest ones, until 1 GiB.
lt::TensorMap make_state(lt::Device dev, std::size_t& largest) {
  const std::int64_t elements[] = {16 << 20, 4 << 20, 1 << 20, 256 << 10, 64 << 10, 1 << 10};
  lt::TensorMap state;
  std::size_t bytes = 0;
  largest = 0;
  for (int k = 0; bytes < total_bytes; ++k) {
    std::int64_t n = elements[k % 6];
    n = std::min<std::int64_t>(n, static_cast<std::int64_t>((total_bytes - bytes) / 4));
    char name[32];
    std::snprintf(name, sizeof name, "layer%03d.weight", k);
    state.emplace(name, lt::full({n}, 0.5 + k, dev, lt::f32));
    bytes += static_cast<std::size_t>(n) * 4;
    largest = std::max(largest, static_cast<std::size_t>(n) * 4);
  }
  return state;
}

/// This process's resident memory ("VmRSS") or its peak ("VmHWM"), in bytes.
std::size_t status_bytes(const char* field) {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind(field, 0) == 0) return std::stoull(line.substr(std::strlen(field) + 1)) * 1024;
  return 0;
}

/// Resets VmHWM to the current resident memory (Linux 4.0 and later).
void reset_peak() { std::ofstream("/proc/self/clear_refs") << "5"; }

void plain_write(const std::string& path, const std::vector<std::pair<const std::byte*, std::size_t>>& parts) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  for (auto [p, n] : parts)
    for (std::size_t done = 0; done < n;) done += static_cast<std::size_t>(::write(fd, p + done, n - done));
  ::fsync(fd);
  ::close(fd);
}

void plain_read(const std::string& path, const std::vector<std::size_t>& sizes) {
  int fd = ::open(path.c_str(), O_RDONLY);
  for (std::size_t n : sizes) {
    lt::Buffer b(n);  // a fresh buffer per tensor, as load() makes
    for (std::size_t done = 0; done < n;) done += static_cast<std::size_t>(::read(fd, b.data() + done, n - done));
    bench::keep(b);
  }
  ::close(fd);
}

}  // namespace

int main(int argc, char** argv) {
  const std::string dir = argc > 1 ? argv[1] : std::filesystem::temp_directory_path().string();
  const std::string model_path = dir + "/bench_io_model.safetensors", plain_path = dir + "/bench_io_plain.bin";
  const lt::Device dev = lt::device();
  std::size_t largest = 0;
  lt::TensorMap state = make_state(dev, largest);
  lt::sync(dev);
  lt::wait_device_ops();
  std::printf("state dict: %zu tensors, %.0f MiB, largest %.0f MiB, on %s\n", state.size(),
              static_cast<double>(total_bytes) / (1 << 20), static_cast<double>(largest) / (1 << 20),
              lt::describe(state.begin()->second).c_str());

  // Peak memory of one save from the lazy device, the tensors already computed.
  std::size_t before = status_bytes("VmRSS");
  reset_peak();
  lt::save(state, model_path);
  std::size_t added = status_bytes("VmHWM") - before;
  std::printf("save: peak resident memory +%.1f MiB (largest tensor %.0f MiB; bound %.1f MiB)\n",
              static_cast<double>(added) / (1 << 20), static_cast<double>(largest) / (1 << 20),
              1.1 * static_cast<double>(largest) / (1 << 20));

  std::vector<std::pair<const std::byte*, std::size_t>> parts;
  std::vector<std::size_t> sizes;
  for (auto& [name, t] : state) {
    lt::Array a = lt::materialize(t);
    parts.emplace_back(a.view.data, static_cast<std::size_t>(a.view.numel()) * 4);
    sizes.push_back(parts.back().second);
  }
  const double gb = static_cast<double>(total_bytes) / 1e9;
  auto [save_s, write_s] = bench::median_seconds_paired([&] { lt::save(state, model_path); },
                                                        [&] { plain_write(plain_path, parts); }, 3);
  std::printf("save (durable) %.2f GB/s | plain write+fsync %.2f GB/s | ratio %.2f\n", gb / save_s, gb / write_s,
              write_s / save_s);
  auto [load_s, read_s] = bench::median_seconds_paired([&] { bench::keep(lt::load(model_path, dev)); },
                                                       [&] { plain_read(plain_path, sizes); }, 3);
  std::printf("load (to %s, page cache warm) %.2f GB/s | plain read %.2f GB/s | ratio %.2f\n",
              lt::describe(state.begin()->second).c_str(), gb / load_s, gb / read_s, read_s / load_s);
  double mapped_s = bench::median_seconds([&] { bench::keep(lt::load(model_path, lt::cpu, {.mmap = true})); }, 3);
  std::printf("load (cpu, {.mmap = true}: views, no copy) %.3f s\n", mapped_s);
  std::filesystem::remove(model_path);
  std::filesystem::remove(plain_path);
}
