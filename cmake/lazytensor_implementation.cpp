// The one translation unit of lazytensor's implementation: every kernel, the scheduler and
// the runtime, compiled once per program (see cmake/lazytensorImplementation.cmake).
#include <lazytensor/implementation.hpp>
