// Prints the probe expression's structural and node hashes, for comparison by another process.
#include <cstdio>

#include "../fragment_probe.hpp"

lt::FragmentProbe lt::probe_fragment_in_other_unit() { return probe_fragment_here(); }

int main() {
  lt::FragmentProbe p = lt::probe_fragment_here();
  std::printf("%llx %llx\n", static_cast<unsigned long long>(p.structural_hash),
              static_cast<unsigned long long>(p.node_hash));
}
