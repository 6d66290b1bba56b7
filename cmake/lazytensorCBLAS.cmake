# Finds a BLAS with the CBLAS interface and makes the target lazytensor::CBLAS (the library and
# the folder of its cblas.h). The build includes this module, and so does the installed package
# config, so that a consumer links the same kind of BLAS the package was configured with.
# Sets LAZYTENSOR_CBLAS_FOUND and, when found, LAZYTENSOR_CBLAS_LIBRARIES.
if(TARGET lazytensor::CBLAS)
  set(LAZYTENSOR_CBLAS_FOUND TRUE)
  return()
endif()
set(LAZYTENSOR_CBLAS_FOUND FALSE)

# OpenBLAS first: FindBLAS's own order may settle on the reference BLAS, 10-50x slower.
# A BLA_VENDOR given by the user is theirs to choose.
if(NOT DEFINED BLA_VENDOR)
  set(BLA_VENDOR OpenBLAS)
  find_package(BLAS QUIET)
  unset(BLA_VENDOR)
endif()
if(NOT BLAS_FOUND)
  find_package(BLAS QUIET)
endif()
# Debian puts cblas.h in the multiarch include folder; other layouts keep it in openblas/.
find_path(LAZYTENSOR_CBLAS_INCLUDE_DIR cblas.h PATH_SUFFIXES openblas
  DOC "Folder of the cblas.h that matches the BLAS library")

if(BLAS_FOUND AND LAZYTENSOR_CBLAS_INCLUDE_DIR)
  add_library(lazytensor::CBLAS INTERFACE IMPORTED)
  target_link_libraries(lazytensor::CBLAS INTERFACE BLAS::BLAS)
  target_include_directories(lazytensor::CBLAS INTERFACE "${LAZYTENSOR_CBLAS_INCLUDE_DIR}")
  set(LAZYTENSOR_CBLAS_FOUND TRUE)
  set(LAZYTENSOR_CBLAS_LIBRARIES "${BLAS_LIBRARIES}")
endif()
