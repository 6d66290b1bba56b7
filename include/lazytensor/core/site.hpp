#pragma once
// Where user code recorded an op. Every public function that records takes the caller's line
// as a defaulted last parameter (`Site site = Site::current()`), holds it on its thread while
// it runs (RecordingSite), and each node made meanwhile keeps it. Debug output names it; it
// never enters a node's hash or a plan's key: one graph traced from two places is one plan.
#include <cstdint>
#include <source_location>
#include <string>
#include <string_view>

namespace lt {

/// A call site. libstdc++'s and libc++'s are one pointer to a static, so passing and keeping one
/// costs a pointer. A function of your own can take one too, `lt::Site site =
/// lt::Site::current()`, and open a RecordingSite with it: its ops then name its caller's line.
#if defined(__cpp_lib_source_location)
using Site = std::source_location;
#else
/// Where the standard library has no std::source_location (libstdc++'s needs a builtin that clang
/// gained in 15): the same members, from the builtins GCC and clang have long had, which in a
/// default argument name the caller's line as std::source_location::current() does. Four
/// words, not one pointer.
class Site {
 public:
  constexpr Site() noexcept = default;
  static constexpr Site current(const char* file = __builtin_FILE(), const char* function = __builtin_FUNCTION(),
                                std::uint_least32_t line = __builtin_LINE(),
                                std::uint_least32_t column = __builtin_COLUMN()) noexcept {
    Site s;
    s.file_ = file;
    s.function_ = function;
    s.line_ = line;
    s.column_ = column;
    return s;
  }
  constexpr std::uint_least32_t line() const noexcept { return line_; }
  constexpr std::uint_least32_t column() const noexcept { return column_; }
  constexpr const char* file_name() const noexcept { return file_; }
  constexpr const char* function_name() const noexcept { return function_; }

 private:
  const char* file_ = "";
  const char* function_ = "";
  std::uint_least32_t line_ = 0;
  std::uint_least32_t column_ = 0;
};
#endif

namespace detail {
/// The site of the outermost RecordingSite alive on this thread, or null.
inline thread_local const Site* recording_site = nullptr;
}  // namespace detail

/// While it lives, the ops recorded on this thread take `site`, unless an outer RecordingSite
/// holds one already. The outermost wins: the ops that a composite (softmax), a layer or a
/// loss records through other public functions name the line that called it, not the library's.
class RecordingSite {
 public:
  explicit RecordingSite(const Site& site) noexcept : owner_(detail::recording_site == nullptr) {
    if (owner_) detail::recording_site = &site;
  }
  RecordingSite(const Site&&) = delete;  // it is held by address: a temporary would dangle
  ~RecordingSite() {
    if (owner_) detail::recording_site = nullptr;
  }
  RecordingSite(const RecordingSite&) = delete;
  RecordingSite& operator=(const RecordingSite&) = delete;

 private:
  bool owner_;
};

/// The site an op recorded now takes: the outermost RecordingSite's, or `fallback` when none is
/// alive (an expression built outside any call keeps the line it was written on).
inline const Site& recording_site_or(const Site& fallback) noexcept {
  const Site* s = detail::recording_site;
  return s != nullptr ? *s : fallback;
}

/// The site an op recorded now takes; line 0 when none is known.
inline Site current_recording_site() noexcept {
  const Site* s = detail::recording_site;
  return s != nullptr ? *s : Site{};
}

/// Whether `site` names a line (nodes made outside any recording call have none).
inline bool known(const Site& site) noexcept { return site.line() != 0; }

/// "trace/trace_test.cpp:42": the file's last two path components and the line; empty for an
/// unknown site. Two components tell apart the usual repeats (a `model.cpp` per example, a
/// `main.cpp` per tool) where one would not, and stay short and the same on every machine,
/// where the full path would not.
inline std::string site_text(const Site& site) {
  if (!known(site)) return {};
  std::string_view file = site.file_name();
  std::size_t cut = file.find_last_of("/\\");
  if (cut != std::string_view::npos && cut > 0) {
    std::size_t parent = file.find_last_of("/\\", cut - 1);
    file.remove_prefix(parent == std::string_view::npos ? 0 : parent + 1);
  }
  return std::string(file) + ":" + std::to_string(site.line());
}

}  // namespace lt
