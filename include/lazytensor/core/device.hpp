#pragma once
// Devices: the eager CPU device and lazy devices, which record ops until a barrier.
#include <cstdint>
#include <ostream>
#include <string>

namespace lt {

/// Where a tensor lives: the eager cpu device, or lazy device n (printed "lazy:n"), which records ops and
/// runs them at a barrier.
struct Device {
  /// The kinds of device: cpu runs each op at once, lazy records it.
  enum class Kind : std::uint8_t { cpu, lazy };
  /// Eager cpu or lazy.
  Kind kind = Kind::cpu;
  /// The device's number among lazy devices (0 for cpu).
  int index = 0;

  /// Whether ops on this device are recorded rather than run.
  constexpr bool is_lazy() const { return kind == Kind::lazy; }
  /// "cpu" or "lazy:<index>".
  std::string str() const { return kind == Kind::cpu ? "cpu" : "lazy:" + std::to_string(index); }
  /// Same kind and index.
  friend constexpr bool operator==(const Device&, const Device&) = default;
  /// Writes str().
  friend std::ostream& operator<<(std::ostream& os, const Device& d) { return os << d.str(); }
};

/// The eager device: ops run when called.
inline constexpr Device cpu{Device::Kind::cpu, 0};

/// Lazy device number `index`.
constexpr Device lazy(int index = 0) { return {Device::Kind::lazy, index}; }

}  // namespace lt

namespace lt {
/// Lazy devices a program can address: lazy:0 to lazy:63.
inline constexpr int max_lazy_devices = 64;

namespace detail {
// Per thread, so that replica threads can each address their own device later.
inline thread_local int current_lazy_index = 0;
}  // namespace detail

/// This thread's current lazy device: `lazy:0` unless lt::set_device or an lt::device_guard
/// (core/device_guard.hpp) chose another, or the thread is a replica of lt::launch.
inline Device device() { return lazy(detail::current_lazy_index); }
}  // namespace lt
