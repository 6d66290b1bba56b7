# cmake -DBUILD_DIR=... -DTARGET=... -DSOURCE=... -P expect_compile_error.cmake
# Passes when building TARGET fails and the output holds each `// expect: ` text of SOURCE.
execute_process(COMMAND "${CMAKE_COMMAND}" --build "${BUILD_DIR}" --target "${TARGET}"
                RESULT_VARIABLE result OUTPUT_VARIABLE output ERROR_VARIABLE output)
if(result EQUAL 0)
  message(FATAL_ERROR "${SOURCE} compiled, but it must not")
endif()
file(STRINGS "${SOURCE}" expectations REGEX "^// expect: ")
if(NOT expectations)
  message(FATAL_ERROR "${SOURCE} has no `// expect: ` line")
endif()
foreach(line IN LISTS expectations)
  string(REGEX REPLACE "^// expect: " "" text "${line}")
  string(FIND "${output}" "${text}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "the compiler's output lacks \"${text}\":\n${output}")
  endif()
endforeach()
message(STATUS "${SOURCE}: fails to compile as expected")
