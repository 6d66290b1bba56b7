#pragma once
// Files for io/: a whole file mapped for reading, and a file replaced atomically on writing.
// Included by the implementation only (io/definitions.hpp).
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <utility>

#include "lazytensor/core/error.hpp"

namespace lt::io {

namespace detail {
inline std::string errno_text(int err) { return std::strerror(err); }
}  // namespace detail

/// A file mapped read-only into memory, with one zero page after its end: loops that read a
/// whole last packet past a tensor's end stay inside the mapping. Pages are private, so a
/// tensor that views them may be written without touching the file. Another process that
/// truncates the file while it is mapped makes reads past the new end fault (SIGBUS); the
/// writers here never do, they replace the file by renaming.
class MappedFile {
 public:
  explicit MappedFile(const std::string& path) : path_(path) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    LT_CHECK(fd >= 0, "load: ", path, ": cannot open (", detail::errno_text(errno), ")");
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
      int err = errno;
      ::close(fd);
      fail("load: ", path, ": cannot stat (", detail::errno_text(err), ")");
    }
    if (!S_ISREG(st.st_mode)) {
      ::close(fd);
      fail("load: ", path, ": not a regular file");
    }
    size_ = static_cast<std::uint64_t>(st.st_size);
    const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
    mapped_ = (static_cast<std::size_t>(size_) + page - 1) / page * page + page;
    void* base = ::mmap(nullptr, mapped_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (base == MAP_FAILED) {
      int err = errno;
      ::close(fd);
      fail("load: ", path, ": cannot map ", size_, " bytes (", detail::errno_text(err), ")");
    }
    if (size_ > 0 &&
        ::mmap(base, static_cast<std::size_t>(size_), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_FIXED, fd, 0) == MAP_FAILED) {
      int err = errno;
      ::munmap(base, mapped_);
      ::close(fd);
      fail("load: ", path, ": cannot map ", size_, " bytes (", detail::errno_text(err), ")");
    }
    ::close(fd);  // the mapping keeps the file
    data_ = static_cast<std::byte*>(base);
  }
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile() { ::munmap(data_, mapped_); }

  const std::byte* data() const { return data_; }
  std::byte* mutable_data() const { return data_; }
  std::uint64_t size() const { return size_; }
  const std::string& path() const { return path_; }
  /// Tells the kernel that [begin, end) will be read once, in order.
  void advise_sequential(std::uint64_t begin, std::uint64_t end) const {
    const std::uint64_t page = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
    std::uint64_t first = begin / page * page;
    if (end > first) ::madvise(data_ + first, static_cast<std::size_t>(end - first), MADV_SEQUENTIAL | MADV_WILLNEED);
  }

 private:
  std::string path_;
  std::byte* data_ = nullptr;
  std::uint64_t size_ = 0;
  std::size_t mapped_ = 0;
};

/// Writes a file that replaces `path` all at once: the bytes go to a temporary file in the
/// same directory, which commit() flushes, syncs and renames over `path`, then syncs the
/// directory. A reader (or a machine that crashes) sees the old file or the new one, never a
/// part of either. Destroyed uncommitted, it removes the temporary and leaves `path` as it was.
class AtomicFileWriter {
 public:
  explicit AtomicFileWriter(std::string path) : path_(std::move(path)) {
    static std::atomic<unsigned> counter{0};
    for (int attempt = 0; attempt < 100; ++attempt) {
      temp_ = path_ + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter++);
      fd_ = ::open(temp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
      if (fd_ >= 0 || errno != EEXIST) break;
    }
    LT_CHECK(fd_ >= 0, "save: ", path_, ": cannot create a file beside it (", detail::errno_text(errno), ")");
  }
  AtomicFileWriter(const AtomicFileWriter&) = delete;
  AtomicFileWriter& operator=(const AtomicFileWriter&) = delete;
  ~AtomicFileWriter() {
    if (fd_ >= 0) ::close(fd_);
    if (!committed_) ::unlink(temp_.c_str());
  }

  void write(const void* data, std::size_t bytes) {
    const char* p = static_cast<const char*>(data);
    while (bytes > 0) {
      // Linux writes at most about 2 GiB per call.
      ssize_t n = ::write(fd_, p, std::min<std::size_t>(bytes, std::size_t{1} << 30));
      if (n < 0 && errno == EINTR) continue;
      LT_CHECK(n > 0, "save: ", path_, ": write failed (", n < 0 ? detail::errno_text(errno) : "no progress",
               "); the old file is left as it was");
      p += n;
      bytes -= static_cast<std::size_t>(n);
    }
  }

  /// Makes the new file `path`. `durable`: flush it to the disk first, and the directory
  /// entry after, so that it survives a power cut, not only a crash of the process.
  void commit(bool durable = true) {
    if (durable) LT_CHECK(::fsync(fd_) == 0, "save: ", path_, ": fsync failed (", detail::errno_text(errno), ")");
    int fd = std::exchange(fd_, -1);
    LT_CHECK(::close(fd) == 0, "save: ", path_, ": close failed (", detail::errno_text(errno), ")");
    LT_CHECK(::rename(temp_.c_str(), path_.c_str()) == 0, "save: ", path_, ": cannot replace it (",
             detail::errno_text(errno), ")");
    committed_ = true;
    if (!durable) return;
    std::filesystem::path dir = std::filesystem::path(path_).parent_path();
    int dfd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    LT_CHECK(dfd >= 0, "save: ", path_, ": cannot open its directory to sync it (", detail::errno_text(errno), ")");
    int rc = ::fsync(dfd);
    int err = errno;
    ::close(dfd);
    LT_CHECK(rc == 0, "save: ", path_, ": fsync of its directory failed (", detail::errno_text(err), ")");
  }

 private:
  std::string path_, temp_;
  int fd_ = -1;
  bool committed_ = false;
};

}  // namespace lt::io
