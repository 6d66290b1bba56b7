# lazytensor_flags_rsp(<var>): writes the include dirs and definitions of lazytensor and its
# dependencies as a GCC/Clang response file in the current binary dir, for compile checks that
# run the compiler directly, and sets <var> to its path. One file per configuration because
# TBB's definitions depend on it: the path holds $<CONFIG>, for use in add_custom_command.
# The compiler's own dirs (/usr/include) are left out, as in CMake's compile lines.
function(lazytensor_flags_rsp out_var)
  set(implicit_dirs "")
  foreach(dir IN LISTS CMAKE_CXX_IMPLICIT_INCLUDE_DIRECTORIES)
    string(REGEX REPLACE "([][+.*?()^$|\\])" "\\\\\\1" dir "${dir}")
    list(APPEND implicit_dirs "${dir}")
  endforeach()
  list(JOIN implicit_dirs "|" implicit_regex)
  set(includes "$<REMOVE_DUPLICATES:$<TARGET_PROPERTY:lazytensor_headers,INTERFACE_INCLUDE_DIRECTORIES>>")
  if(implicit_regex)
    set(includes "$<FILTER:${includes},EXCLUDE,^(${implicit_regex})$>")
  endif()
  set(defines "$<REMOVE_DUPLICATES:$<TARGET_PROPERTY:lazytensor_headers,INTERFACE_COMPILE_DEFINITIONS>>")
  set(rsp "${CMAKE_CURRENT_BINARY_DIR}/flags-$<CONFIG>.rsp")
  file(GENERATE OUTPUT "${rsp}" CONTENT
"-std=c++20
$<$<BOOL:${includes}>:\"-I$<JOIN:${includes},\"\n\"-I>\">
$<$<BOOL:${defines}>:\"-D$<JOIN:${defines},\"\n\"-D>\">
" TARGET lazytensor_headers)  # TARGET after CONTENT: the other order crashes CMake 3.25
  set(${out_var} "${rsp}" PARENT_SCOPE)
endfunction()
