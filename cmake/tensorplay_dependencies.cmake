# The libraries libtensorplay links, found the same way by its own build and by a C++ project that
# uses the installed package (tensorplayConfig.cmake includes this file). OpenMP, Highway and oneDNN
# come with CMake packages; OpenBLAS's only sets variables, and must be its OpenMP build, whose
# threads are our OpenMP pool (DESIGN.md), so it becomes an imported target of ours.
find_package(OpenMP REQUIRED)
find_package(hwy REQUIRED)
find_package(dnnl REQUIRED)
if(NOT TARGET tensorplay::openblas)
  find_library(TP_OPENBLAS_LIBRARY openblas
               PATHS /usr/lib/${CMAKE_LIBRARY_ARCHITECTURE}/openblas-openmp NO_DEFAULT_PATH)
  find_library(TP_OPENBLAS_LIBRARY openblas REQUIRED)
  add_library(tensorplay::openblas UNKNOWN IMPORTED)
  set_target_properties(tensorplay::openblas PROPERTIES IMPORTED_LOCATION ${TP_OPENBLAS_LIBRARY})
endif()
# Gloo (Debian's libgloo-dev), the collective engine of tensorplay.distributed: optional, since a
# build without it is a build for one process.
find_package(Gloo CONFIG QUIET)
