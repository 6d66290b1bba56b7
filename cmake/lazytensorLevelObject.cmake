# cmake -DOBJDUMP=... -DOBJCOPY=... -DINPUT=<object> -DOUTPUT=<object> -DSUFFIX=<level> -DKEEP=<symbol>
#   -P lazytensorLevelObject.cmake
#
# Gives one capability level's object (cmake/lazytensor_kernels.cpp compiled for that level) names
# of its own: every function and constant it defines, inline ones included, is renamed
# <name>.lt_<level>. The linker keeps one copy of each same-named inline function whatever flags
# compiled it, so without this an AVX-512 copy of an Eigen or lazytensor helper could serve the
# baseline level. Left alone: the level's entry (KEEP), the mutable state in writable sections
# (a static local, an inline variable: one object per program, shared by every level) and type
# information (exceptions and dynamic_cast compare it across levels).
foreach(var OBJDUMP OBJCOPY INPUT OUTPUT SUFFIX KEEP)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "lazytensorLevelObject.cmake: ${var} is not set")
  endif()
endforeach()

execute_process(COMMAND "${OBJDUMP}" -t "${INPUT}" OUTPUT_VARIABLE table RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${OBJDUMP} -t ${INPUT} failed (${rc})")
endif()

# objdump -t: address, seven flag columns (l, g, u or blank; w or blank; ...), section, tab,
# size, name. Local symbols (l) need no name of their own, but for the signatures of COMDAT
# groups (a constructor's C5 group holds its C1 and C2): the linker keeps one group of a name.
string(REGEX MATCHALL "[0-9a-f]+ [gul ][w ][^\n]*" lines "${table}")
set(map "")
set(renamed 0)
foreach(line IN LISTS lines)
  if(NOT line MATCHES "^[0-9a-f]+ (.)(.)..... ([^\t]+)\t[0-9a-f]+ (\\.hidden |\\.protected |\\.internal )?([^ ]+)$")
    continue()
  endif()
  set(section "${CMAKE_MATCH_3}")
  set(name "${CMAKE_MATCH_5}")
  if((CMAKE_MATCH_1 STREQUAL "l" AND NOT section STREQUAL ".group") OR
     (CMAKE_MATCH_1 STREQUAL " " AND NOT CMAKE_MATCH_2 STREQUAL "w"))
    continue()
  endif()
  if(section STREQUAL "*UND*" OR section STREQUAL "*ABS*" OR section STREQUAL "*COM*" OR name STREQUAL KEEP)
    continue()
  endif()
  if(section MATCHES "^\\.(data|bss|tdata|tbss)(\\.|$)" AND NOT section MATCHES "^\\.data\\.rel\\.ro")
    continue()
  endif()
  if(name MATCHES "^_ZT[IS]")
    continue()
  endif()
  string(APPEND map "${name} ${name}.lt_${SUFFIX}\n")
  math(EXPR renamed "${renamed} + 1")
endforeach()
if(renamed EQUAL 0)
  message(FATAL_ERROR "lazytensorLevelObject.cmake: no symbol of ${INPUT} to rename (objdump's output not understood)")
endif()
file(WRITE "${OUTPUT}.symbols" "${map}")
execute_process(COMMAND "${OBJCOPY}" "--redefine-syms=${OUTPUT}.symbols" "${INPUT}" "${OUTPUT}" RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${OBJCOPY} --redefine-syms ${INPUT} failed (${rc})")
endif()
