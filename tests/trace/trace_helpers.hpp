#pragma once
// Reading what a trace recorded and ran, for the tracing tests.
#include <cstdint>
#include <sstream>
#include <string>
#include <string_view>

#include <gtest/gtest.h>

#include <lazytensor/lazytensor.hpp>

namespace lt::testing_helpers {

/// How many times op `name` has run since the last metrics::reset().
inline std::int64_t runs(std::string_view name) { return metrics::counter("lt::" + std::string(name)); }

/// The ops of a graph other than its device_data leaves.
inline std::int64_t compute_nodes(const std::string& ir) {
  std::int64_t n = 0;
  std::istringstream lines(ir);
  for (std::string line; std::getline(lines, line);)
    if (line.find(" = ") != std::string::npos && line.find("ROOT") == std::string::npos &&
        line.find("device_data") == std::string::npos)
      ++n;
  return n;
}

/// `what` throws lt::Error whose message contains `part`.
template <class F>
void expect_error(F&& what, const std::string& part) {
  try {
    what();
    ADD_FAILURE() << "no error; expected one mentioning '" << part << "'";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
  }
}

}  // namespace lt::testing_helpers
