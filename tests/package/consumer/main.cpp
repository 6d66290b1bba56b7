// Uses the library the way an outside project would; exits non-zero on a wrong result.
#include <lazytensor/lazytensor.hpp>

int main() {
  auto a = lt::full({1}, 1.5f, lt::device());
  auto b = a + a;
  lt::sync();
  return b.item<float>() == 3.0f && lt::metrics::counter("MarkStep") == 1 ? 0 : 1;
}
