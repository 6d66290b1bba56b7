# cmake -DCOMPILER=... -DFLAGS=<flags.rsp> -DSOURCE=... -DSTAMP=... [-DDEPFILE=...] -P expect_compile_error.cmake
# Passes, and writes STAMP, when compiling SOURCE with -fsyntax-only fails and the output holds
# each `// expect: ` text of SOURCE. DEPFILE: where the compiler lists the headers it read.
file(REMOVE "${STAMP}")
set(depfile_args "")
if(DEPFILE)
  set(depfile_args -MD -MT "${STAMP}" -MF "${DEPFILE}")
endif()
execute_process(COMMAND "${COMPILER}" "@${FLAGS}" -fsyntax-only ${depfile_args} "${SOURCE}"
                RESULT_VARIABLE result OUTPUT_VARIABLE output ERROR_VARIABLE output)
if(result EQUAL 0)
  message(FATAL_ERROR "${SOURCE} compiled, but it must not")
endif()
# clang words a failed static_assert as `static_assert failed due to requirement '...' "text"`
# (14) or `static assertion failed due to requirement '...': text` (15 on); GCC's words,
# `static assertion failed: text`, are what expectations spell.
string(REGEX REPLACE "static_assert failed( due to requirement '[^'\n]*')? \"" "static assertion failed: "
       output "${output}")
string(REGEX REPLACE "static assertion failed due to requirement '[^'\n]*': " "static assertion failed: "
       output "${output}")
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
file(TOUCH "${STAMP}")
