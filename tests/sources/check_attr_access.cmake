# cmake -DINCLUDE_DIR=<include/> -DSELF_TEST=<file> -P check_attr_access.cmake
#
# Op attributes are read and built through their typed structs (ops/op_attrs.hpp) and
# descriptors through designated initialisers: no header reads an attribute word by a literal
# position, builds attribute words by hand, or lays out a descriptor positionally. Only
# ops/attr_fields.hpp, which does the encoding, touches words by position.
set(patterns
    "[^A-Za-z0-9_](ints|floats|values)\\[[0-9]+\\]"   # a.ints[3]
    "\\.(i|f)\\([0-9]+\\)"                             # a.i(3)
    "[^A-Za-z0-9_]Attrs *\\{[^}]"                      # Attrs{{1, 2}, {}}
    "[^A-Za-z0-9_]Attrs +[a-z_]+ *\\{"                 # Attrs a{{1, 2}, {}}
    "OpDesc *\\{ *OpId::"                              # OpDesc{OpId::x, "x", ...}
    "value_ints")

function(offending_lines file out)
  set(found "")
  file(READ "${file}" text)
  string(REPLACE ";" "<semicolon>" text "${text}")  # a CMake list separator: kept out of the lines
  string(REPLACE "\n" ";" lines "${text}")
  set(number 0)
  foreach(line IN LISTS lines)
    math(EXPR number "${number} + 1")
    string(REGEX REPLACE "//.*$" "" code "${line}")  # comments may name words by position
    foreach(pattern IN LISTS patterns)
      if(code MATCHES "${pattern}")
        list(APPEND found "${file}:${number}: ${line}")
        break()
      endif()
    endforeach()
  endforeach()
  set(${out} "${found}" PARENT_SCOPE)
endfunction()

# The check must catch what it is for: a file of known offences fails it line by line.
offending_lines("${SELF_TEST}" caught)
list(LENGTH caught caught_count)
file(STRINGS "${SELF_TEST}" self_lines REGEX "// offence")
list(LENGTH self_lines offences)
if(NOT caught_count EQUAL offences)
  message(FATAL_ERROR "the check caught ${caught_count} of the ${offences} offences in ${SELF_TEST}:\n${caught}")
endif()

file(GLOB_RECURSE headers "${INCLUDE_DIR}/lazytensor/*.hpp")
list(FILTER headers EXCLUDE REGEX "/ops/attr_fields\\.hpp$")
set(all "")
foreach(header IN LISTS headers)
  offending_lines("${header}" found)
  list(APPEND all ${found})
endforeach()
list(LENGTH headers checked)
if(all)
  string(REPLACE ";" "\n" report "${all}")
  string(REPLACE "<semicolon>" ";" report "${report}")
  message(FATAL_ERROR "attribute words or a descriptor by position (use ops/op_attrs.hpp's structs):\n${report}")
endif()
message(STATUS "${checked} headers read and build attributes through their typed structs")
