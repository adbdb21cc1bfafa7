# find_package(tensorplay): the target tensorplay::tensorplay, after the libraries it links.
include(${CMAKE_CURRENT_LIST_DIR}/tensorplay_dependencies.cmake)
include(${CMAKE_CURRENT_LIST_DIR}/tensorplayTargets.cmake)
