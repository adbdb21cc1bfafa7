# Run by `cmake --install`: installs the public headers, which are tensorplay.h and every header of
# ours it includes, directly or not, as the compiler lists them (-MM). What is public is decided in
# one place, tensorplay.h's includes, and nothing internal (kernels, backends, dispatch internals)
# reaches the install tree. Set by the caller: TP_SOURCE_DIR, TP_CXX_COMPILER.
execute_process(COMMAND ${TP_CXX_COMPILER} -std=c++20 -MM -I${TP_SOURCE_DIR}/csrc
                        ${TP_SOURCE_DIR}/csrc/tensorplay/tensorplay.h
                OUTPUT_VARIABLE dependencies ERROR_VARIABLE errors RESULT_VARIABLE status)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "listing the headers tensorplay.h includes failed:\n${errors}")
endif()
string(REGEX MATCHALL "[^ \\\n]+\\.h" headers "${dependencies}")
foreach(header ${headers})
  cmake_path(RELATIVE_PATH header BASE_DIRECTORY ${TP_SOURCE_DIR}/csrc OUTPUT_VARIABLE relative)
  if(relative MATCHES "^tensorplay/")
    cmake_path(GET relative PARENT_PATH dir)
    file(INSTALL ${header} DESTINATION "$ENV{DESTDIR}${CMAKE_INSTALL_PREFIX}/include/${dir}")
  endif()
endforeach()
