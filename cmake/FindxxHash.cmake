# Finds xxHash, which Debian ships without a CMake config.
# Defines xxHash_FOUND, xxHash_VERSION and the header-only target xxHash::xxHash.
find_path(xxHash_INCLUDE_DIR NAMES xxhash.h)
mark_as_advanced(xxHash_INCLUDE_DIR)

if(xxHash_INCLUDE_DIR AND EXISTS "${xxHash_INCLUDE_DIR}/xxhash.h")
  file(STRINGS "${xxHash_INCLUDE_DIR}/xxhash.h" _xxhash_version_lines
       REGEX "^#define XXH_VERSION_(MAJOR|MINOR|RELEASE) +[0-9]+")
  foreach(_part MAJOR MINOR RELEASE)
    string(REGEX REPLACE ".*XXH_VERSION_${_part} +([0-9]+).*" "\\1" _xxhash_${_part}
           "${_xxhash_version_lines}")
  endforeach()
  set(xxHash_VERSION "${_xxhash_MAJOR}.${_xxhash_MINOR}.${_xxhash_RELEASE}")
  unset(_xxhash_version_lines)
endif()

include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(xxHash
  REQUIRED_VARS xxHash_INCLUDE_DIR
  VERSION_VAR xxHash_VERSION)

if(xxHash_FOUND AND NOT TARGET xxHash::xxHash)
  # Inlining everything means no libxxhash is needed at link time.
  add_library(xxHash::xxHash INTERFACE IMPORTED)
  set_target_properties(xxHash::xxHash PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES "${xxHash_INCLUDE_DIR}"
    INTERFACE_COMPILE_DEFINITIONS XXH_INLINE_ALL)
endif()
