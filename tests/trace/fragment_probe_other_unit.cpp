// The probe expression compiled in a second translation unit.
#include "fragment_probe.hpp"

namespace lt {
FragmentProbe probe_fragment_in_other_unit() { return probe_fragment_here(); }
}  // namespace lt
