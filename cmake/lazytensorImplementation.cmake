# lazytensor installs as headers only. Its implementation (every kernel, the scheduler and the
# runtime) is one source file that the consuming build compiles once, into a static library,
# instead of in every file that includes the headers.
#
# lazytensor_add_implementation(<headers target> <source>) makes the static library
# lazytensor_implementation from <source>, linked to <headers target>, and names it
# lazytensor::lazytensor: the target programs link. Its compile options are the build's.
#
# On x86-64 (GCC or clang, ELF) the library holds the kernels once more per capability level
# (x86-64-v2, -v3 = avx2, -v4 = avx512, avx512_bf16), from lazytensor_kernels.cpp beside
# <source>; the program runs the highest level its CPU has (LT_CPU_CAPABILITY forces one).
# LAZYTENSOR_KERNEL_LEVELS=OFF builds the implementation's own copy alone.
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
  lazytensor_add_kernel_levels(lazytensor_implementation ${headers} "${source}")
endfunction()

set(_lazytensor_implementation_dir "${CMAKE_CURRENT_LIST_DIR}")

# lazytensor_add_kernel_levels(<implementation target> <headers target> <source>): compiles
# lazytensor_kernels.cpp (beside <source>) once per level into <implementation target>.
function(lazytensor_add_kernel_levels target headers source)
  set(supported OFF)
  if(CMAKE_SYSTEM_PROCESSOR MATCHES "^(x86_64|AMD64|amd64)$" AND CMAKE_CXX_COMPILER_ID MATCHES "^(GNU|Clang)$"
     AND CMAKE_EXECUTABLE_FORMAT STREQUAL "ELF" AND CMAKE_OBJCOPY AND CMAKE_OBJDUMP)
    set(supported ON)
  endif()
  option(LAZYTENSOR_KERNEL_LEVELS "Kernels for each x86-64 capability level, chosen at run time" ${supported})
  if(NOT LAZYTENSOR_KERNEL_LEVELS)
    return()
  endif()
  if(NOT supported)
    message(FATAL_ERROR "LAZYTENSOR_KERNEL_LEVELS needs x86-64, GCC or clang, ELF objects, objcopy and objdump")
  endif()
  get_filename_component(dir "${source}" DIRECTORY)
  set(kernels "${dir}/lazytensor_kernels.cpp")
  set(levels v2 avx2 avx512 avx512_bf16)
  set(flags_v2 -march=x86-64-v2)
  set(flags_avx2 -march=x86-64-v3)
  set(flags_avx512 -march=x86-64-v4)
  set(flags_avx512_bf16 -march=x86-64-v4 -mavx512bf16)
  foreach(level IN LISTS levels)
    set(objects ${target}_kernels_${level})
    set(entry lt_kernels_level_${level})
    add_library(${objects} OBJECT "${kernels}")
    target_link_libraries(${objects} PRIVATE ${headers})
    # The build's flags, then the level's, which win over a -march of the build's; machine code
    # even in an LTO build, since the symbols are renamed in the object file.
    target_compile_options(${objects} PRIVATE ${flags_${level}} -fno-lto)
    set_target_properties(${objects} PROPERTIES INTERPROCEDURAL_OPTIMIZATION OFF)
    target_compile_definitions(${objects} PRIVATE LT_KERNEL_LEVEL_ENTRY=${entry})
    set_target_properties(${objects} PROPERTIES POSITION_INDEPENDENT_CODE ON)
    set(renamed "${CMAKE_CURRENT_BINARY_DIR}/${objects}.o")
    add_custom_command(OUTPUT "${renamed}"
      COMMAND "${CMAKE_COMMAND}" "-DOBJDUMP=${CMAKE_OBJDUMP}" "-DOBJCOPY=${CMAKE_OBJCOPY}"
              "-DINPUT=$<TARGET_OBJECTS:${objects}>" "-DOUTPUT=${renamed}" "-DSUFFIX=${level}" "-DKEEP=${entry}"
              -P "${_lazytensor_implementation_dir}/lazytensorLevelObject.cmake"
      DEPENDS ${objects} "$<TARGET_OBJECTS:${objects}>" "${_lazytensor_implementation_dir}/lazytensorLevelObject.cmake"
      COMMENT "Naming the ${level} kernels' symbols apart"
      VERBATIM)
    target_sources(${target} PRIVATE "${renamed}")
  endforeach()
  # The implementation then lists each level's entry (ops/kernel_levels_definitions.hpp).
  target_compile_definitions(${target} PRIVATE LAZYTENSOR_KERNEL_LEVELS=1)
endfunction()
