#pragma once
// Choosing the current lazy device: the one lt::device() names, and so the default of
// lt::sync() and of the functions that take a device.
#include "lazytensor/core/device.hpp"
#include "lazytensor/core/error.hpp"
#include "lazytensor/core/replica.hpp"

namespace lt {

/// Makes lazy device `d` this thread's current device (torch.cuda.set_device's role; the
/// setting is per thread, as lt::device() is). `d` must be lazy:0 to lazy:63. A replica's thread
/// inside lt::launch keeps its own device: setting another raises lt::Error, since its
/// collectives reach the other replicas through that device.
inline void set_device(Device d) {
  LT_CHECK(d.is_lazy(), "set_device: ", d, " is not a lazy device (the current device is lazy; lt::cpu is always at hand)");
  LT_CHECK(d.index >= 0 && d.index < max_lazy_devices, "set_device: lazy device index ", d.index,
           " is out of range [0, ", max_lazy_devices, ")");
  if (d.index == detail::current_lazy_index) return;
  LT_CHECK(detail::replica_slot().group == nullptr, "set_device: a replica of lt::launch stays on its device ",
           device(), ", not ", d);
  detail::current_lazy_index = d.index;
}

/// While alive, `d` is this thread's current lazy device; the previous one comes back when it
/// goes (c10::DeviceGuard's role). Scopes nest.
class device_guard {
 public:
  /// Sets `d` as set_device does, remembering the current device.
  explicit device_guard(Device d) : saved_(device()) { set_device(d); }
  /// Restores the device that was current when the guard was made.
  ~device_guard() { detail::current_lazy_index = saved_.index; }
  device_guard(const device_guard&) = delete;
  device_guard& operator=(const device_guard&) = delete;

  /// The device that was current before the guard.
  Device previous() const { return saved_; }

 private:
  Device saved_;
};

}  // namespace lt
