#pragma once
// The persistent plan cache: one file per plan in a directory that several processes may
// share. A file is named by the graph key and a tag of the build (library version, compiler,
// ISA, the running kernel level), so builds and CPUs never read each other's plans. It is written to a temporary file, flushed to
// disk and renamed into place, so a reader sees a whole entry or none; its payload carries a
// checksum. A corrupt, truncated, foreign or forged entry is a miss (counted), never a crash
// or a wrong result: the checksum only catches accidents, and every entry is checked as
// untrusted input (plan_io.hpp). A directory that cannot be written degrades to reading only,
// with one warning. Temporary files left by killed writers are removed when the directory is
// opened for writing, once they are old enough that no live writer can own them.
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lazytensor/compile/plan_io.hpp"
#include "lazytensor/core/metrics.hpp"
#include "lazytensor/core/version.hpp"
#include "lazytensor/ops/kernel_levels.hpp"

namespace lt {

namespace detail {

inline constexpr char entry_magic[8] = {'L', 'T', 'P', 'L', 'A', 'N', '\r', '\n'};
// 2: plans hold groups led by a product; 3: members hold no row attributes; 4: attributes keep
// their data ints apart, so structural words count them; 5: groups hold their kind
inline constexpr std::uint32_t entry_format = 5;

/// What a plan depends on besides its graph: the library, the compiler and the instruction set.
inline std::string build_signature() {
  std::string isa;
#ifdef __AVX512F__
  isa += " avx512f";
#endif
#ifdef __AVX2__
  isa += " avx2";
#endif
#ifdef __FMA__
  isa += " fma";
#endif
#ifdef __aarch64__
  isa += " aarch64";
#endif
#ifdef LAZYTENSOR_HAVE_CBLAS
  isa += " cblas";
#endif
  // The kernels that run (their level, and the product libraries chosen for it) decide a
  // plan's tile cuts and paths: a plan written at one level is a miss at another.
  const LevelKernels& kernels = running_kernels();
  return concat("lazytensor ", version_string, "; ", __VERSION__, ";", isa, "; ", sizeof(void*) * 8, "-bit; kernels ",
                capability_name(kernels.level), "; ", kernels.gemm_backend());
}
inline hash_t build_tag() {
  static const hash_t tag = [] {
    std::string s = build_signature();
    return hash_bytes(s.data(), s.size(), entry_format);
  }();
  return tag;
}

/// An entry: magic, format, build tag, key, payload size, payload checksum, payload.
struct EntryHeader {
  char magic[8];
  std::uint32_t format;
  std::uint32_t reserved;  // 0
  hash_t build;
  hash_t key;
  std::uint64_t payload_bytes;
  hash_t checksum;
};

/// The largest entry read: plans of the largest graphs take megabytes.
inline constexpr std::uintmax_t max_entry_bytes = std::uintmax_t{1} << 30;
/// A temporary file this old belongs to no live writer: a writer renames it within one store.
inline constexpr std::chrono::minutes stale_temporary_age{10};

inline std::string hex(hash_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

/// Writes `bytes` to `path` and flushes them to the disk; false on any failure.
inline bool write_durably(const std::filesystem::path& path, const std::vector<std::byte>& bytes) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return false;
  const std::byte* p = bytes.data();
  std::size_t left = bytes.size();
  bool ok = true;
  while (ok && left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n > 0) p += n, left -= static_cast<std::size_t>(n);
    else ok = false;
  }
  ok = ok && ::fsync(fd) == 0;
  return ::close(fd) == 0 && ok;
}

class PersistentCache {
 public:
  /// Uses `dir` from now on (made when missing, unless read-only).
  void open(const std::filesystem::path& dir, bool readonly) {
    std::lock_guard lock(mu_);
    dir_ = dir;
    readonly_ = readonly;
    warned_ = false;
    std::error_code ec;
    if (!readonly) std::filesystem::create_directories(dir, ec);
    if (!std::filesystem::is_directory(dir, ec)) {
      warn_locked("cannot use plan cache directory " + dir.string() + ": it does not exist");
      enabled_ = false;
      return;
    }
    enabled_ = true;
    if (!readonly) remove_stale_temporaries(dir);
  }

  /// Removes the temporary entries of writers killed before their rename (`*.ltplan.tmp.*`
  /// older than stale_temporary_age); returns how many.
  static std::size_t remove_stale_temporaries(const std::filesystem::path& dir) {
    std::size_t removed = 0;
    std::error_code ec;
    const auto now = std::filesystem::file_time_type::clock::now();
    for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
      const std::string name = it->path().filename().string();
      if (name.find(".ltplan.tmp.") == std::string::npos || !it->is_regular_file(ec)) continue;
      const auto written = std::filesystem::last_write_time(it->path(), ec);
      if (!ec && now - written > stale_temporary_age && std::filesystem::remove(it->path(), ec)) ++removed;
    }
    return removed;
  }
  void close() {
    std::lock_guard lock(mu_);
    enabled_ = false;
  }
  bool enabled() const {
    std::lock_guard lock(mu_);
    return enabled_;
  }

  /// The plan stored under `key`, or null (a miss; a bad entry is counted as well).
  std::shared_ptr<const Plan> load(hash_t key) {
    static metrics::Counter& hit = metrics::counter_handle("PersistentCacheHit");
    static metrics::Counter& miss = metrics::counter_handle("PersistentCacheMiss");
    static metrics::Counter& bad = metrics::counter_handle("PersistentCacheDeserializeFailure");
    std::filesystem::path path;
    {
      std::lock_guard lock(mu_);
      if (!enabled_) return nullptr;
      path = entry_path(key);
    }
    std::vector<std::byte> bytes;
    if (!read_file(path, bytes)) {
      miss.add();
      return nullptr;
    }
    try {
      auto plan = std::make_shared<const Plan>(parse(bytes, key));
      hit.add();
      return plan;
    } catch (const Error&) {
      bad.add();
      miss.add();
      return nullptr;
    }
  }

  /// Stores `plan` under its key: a temporary file, flushed, renamed into place.
  void store(const Plan& plan) {
    if (!checkable(plan)) return;
    std::filesystem::path path;
    {
      std::lock_guard lock(mu_);
      if (!enabled_ || readonly_) return;
      path = entry_path(plan.key);
    }
    std::vector<std::byte> payload = serialize_plan(plan);
    EntryHeader h{};
    std::memcpy(h.magic, entry_magic, sizeof h.magic);
    h.format = entry_format;
    h.build = build_tag();
    h.key = plan.key;
    h.payload_bytes = payload.size();
    h.checksum = hash_bytes(payload.data(), payload.size(), h.key);
    std::vector<std::byte> bytes(sizeof h);
    std::memcpy(bytes.data(), &h, sizeof h);
    bytes.insert(bytes.end(), payload.begin(), payload.end());
    // Unique per writer: processes and threads never share a temporary file.
    thread_local std::mt19937_64 rng(std::random_device{}() ^ static_cast<std::uint64_t>(::getpid()));
    std::filesystem::path tmp = path;
    tmp += ".tmp." + std::to_string(::getpid()) + "." + hex(rng());
    std::error_code ec;
    if (!write_durably(tmp, bytes) || (std::filesystem::rename(tmp, path, ec), ec)) {
      std::filesystem::remove(tmp, ec);
      std::lock_guard lock(mu_);
      readonly_ = true;  // a read-only or full directory: stop writing, keep reading
      warn_locked("cannot write to plan cache directory " + dir_.string() + "; plans are no longer stored there");
      return;
    }
    // The rename itself is made durable by flushing the directory.
    int dfd = ::open(path.parent_path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
      ::fsync(dfd);
      ::close(dfd);
    }
  }

 private:
  std::filesystem::path entry_path(hash_t key) const { return dir_ / (hex(key) + "-" + hex(build_tag()) + ".ltplan"); }

  /// Reads the entry at `path`: false where there is none. Only a regular file is read (a
  /// FIFO or device planted under an entry's name would block or never end), through no
  /// link; one too large to be a plan is read as empty bytes, a bad entry.
  static bool read_file(const std::filesystem::path& path, std::vector<std::byte>& out) {
    out.clear();
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW);
    if (fd < 0) return errno != ENOENT && errno != ENOTDIR;  // a link or worse: a bad entry
    struct stat st {};
    bool ok = ::fstat(fd, &st) == 0;
    if (ok && S_ISREG(st.st_mode) && static_cast<std::uintmax_t>(st.st_size) <= max_entry_bytes) {
      out.resize(static_cast<std::size_t>(st.st_size));
      std::size_t got = 0;
      while (ok && got < out.size()) {
        ssize_t n = ::read(fd, out.data() + got, out.size() - got);
        if (n > 0) got += static_cast<std::size_t>(n);
        else ok = n < 0 && errno == EINTR;
      }
      out.resize(got);  // shorter than its size said: a truncated entry
    }
    ::close(fd);
    return true;
  }

  static Plan parse(const std::vector<std::byte>& bytes, hash_t key) {
    EntryHeader h{};
    LT_CHECK(bytes.size() >= sizeof h, "plan cache entry: truncated header");
    std::memcpy(&h, bytes.data(), sizeof h);
    LT_CHECK(std::memcmp(h.magic, entry_magic, sizeof h.magic) == 0, "plan cache entry: not a plan");
    LT_CHECK(h.format == entry_format && h.reserved == 0 && h.build == build_tag(), "plan cache entry: from another build");
    LT_CHECK(h.key == key, "plan cache entry: another key");
    LT_CHECK(h.payload_bytes == bytes.size() - sizeof h, "plan cache entry: truncated payload");
    std::span<const std::byte> payload(bytes.data() + sizeof h, bytes.size() - sizeof h);
    LT_CHECK(hash_bytes(payload.data(), payload.size(), h.key) == h.checksum, "plan cache entry: bad checksum");
    Plan plan = deserialize_plan(payload);
    LT_CHECK(plan.key == key, "plan cache entry: another key inside");
    return plan;
  }

  void warn_locked(const std::string& what) {
    if (warned_) return;
    warned_ = true;
    std::fprintf(stderr, "lazytensor: warning: %s\n", what.c_str());
  }

  mutable std::mutex mu_;
  std::filesystem::path dir_;
  bool enabled_ = false, readonly_ = false, warned_ = false;
};

inline PersistentCache& persistent_cache() {
  static PersistentCache cache;
  return cache;
}

}  // namespace detail

}  // namespace lt
