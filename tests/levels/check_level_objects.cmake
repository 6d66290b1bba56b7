# cmake -DOBJDUMP=... "-DBASELINE=<objects>" "-DV2=<object>" "-DAVX2=<object>" -P check_level_objects.cmake
#
# The kernels of a level use no instruction of a higher one: the implementation's own copy,
# built with no -march (the baseline level), and the v2 copy touch no YMM, ZMM or mask
# register (no AVX at all); the avx2 copy touches no ZMM or mask register (no AVX-512).
# The implementation's own object, not the level objects archived beside it.
list(FILTER BASELINE INCLUDE REGEX "lazytensor_implementation\\.cpp\\.o(bj)?$")
if(NOT BASELINE)
  message(FATAL_ERROR "no object of the implementation's own copy among the objects given")
endif()

function(count_matches object pattern out)
  execute_process(COMMAND "${OBJDUMP}" -d --no-show-raw-insn "${object}"
                  COMMAND grep -cE "${pattern}"
                  OUTPUT_VARIABLE count OUTPUT_STRIP_TRAILING_WHITESPACE RESULTS_VARIABLE results)
  list(GET results 0 dump)
  if(NOT dump EQUAL 0)
    message(FATAL_ERROR "${OBJDUMP} -d ${object} failed (${dump})")
  endif()
  set(${out} "${count}" PARENT_SCOPE)
endfunction()

function(expect_none objects pattern what)
  foreach(object IN LISTS objects)
    count_matches("${object}" "${pattern}" count)
    if(NOT count EQUAL 0)
      message(FATAL_ERROR "${object}: ${count} instructions use ${what}")
    endif()
    message(STATUS "${object}: no instruction uses ${what}")
  endforeach()
endfunction()

expect_none("${BASELINE};${V2}" "%[yz]mm[0-9]|%k[0-7]|vzeroupper" "AVX registers")
expect_none("${AVX2}" "%zmm[0-9]|%k[0-7]" "AVX-512 registers")
# And the checks see instructions at all: the avx2 copy uses YMM registers.
count_matches("${AVX2}" "%ymm[0-9]" count)
if(count EQUAL 0)
  message(FATAL_ERROR "${AVX2}: no YMM register used; the check reads nothing")
endif()
