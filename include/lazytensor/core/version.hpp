#pragma once
// The library's version. Keep it equal to project(VERSION) in CMakeLists.txt (a test checks).

namespace lt {

inline constexpr int version_major = 0, version_minor = 1, version_patch = 0;
inline constexpr const char* version_string = "0.1.0";

}  // namespace lt
