# lazytensor installs as headers only. Its implementation (every kernel, the scheduler and the
# runtime) is one source file that the consuming build compiles once, into a static library,
# instead of in every file that includes the headers.
#
# lazytensor_add_implementation(<headers target> <source>) makes the static library
# lazytensor_implementation from <source>, linked to <headers target>, and names it
# lazytensor::lazytensor: the target programs link. Its compile options are the build's; a
# project that builds for its CPU adds its own, e.g.
#   target_compile_options(lazytensor_implementation PRIVATE -march=native)
function(lazytensor_add_implementation headers source)
  if(TARGET lazytensor_implementation)
    return()
  endif()
  add_library(lazytensor_implementation STATIC "${source}")
  target_link_libraries(lazytensor_implementation PUBLIC ${headers})
  # gzip (data/definitions.hpp) through zlib; the caller has found it (find_package(ZLIB)).
  target_link_libraries(lazytensor_implementation PRIVATE ZLIB::ZLIB)
  # Linkable into shared libraries too.
  set_target_properties(lazytensor_implementation PROPERTIES POSITION_INDEPENDENT_CODE ON)
  add_library(lazytensor::lazytensor ALIAS lazytensor_implementation)
endfunction()
