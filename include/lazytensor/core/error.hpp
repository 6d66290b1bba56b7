#pragma once
// lt::Error and the checks that raise it.
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>

namespace lt {

/// Every error the library raises on bad input or a failed step.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

namespace detail {
template <class... Parts>
[[nodiscard]] std::string concat(Parts&&... parts) {
  std::ostringstream os;
  (os << ... << std::forward<Parts>(parts));
  return os.str();
}
}  // namespace detail

template <class... Parts>
[[noreturn]] void fail(Parts&&... parts) {
  throw Error(detail::concat(std::forward<Parts>(parts)...));
}

}  // namespace lt

/// Throws lt::Error built from the remaining arguments when `cond` is false.
#define LT_CHECK(cond, ...)                 \
  do {                                      \
    if (!(cond)) [[unlikely]]               \
      ::lt::fail(__VA_ARGS__);              \
  } while (false)
