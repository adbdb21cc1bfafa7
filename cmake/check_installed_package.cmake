# ctest's package.examples_out_of_tree: install the C++ package into a scratch prefix, build
# examples/cpp against it as a separate project (find_package(tensorplay)), and run an example.
# cmake -DBUILD_DIR=<tensorplay build> -DEXAMPLES_DIR=<examples/cpp> -DGENERATOR=Ninja
#       -DMAKE_PROGRAM=<ninja> -DCXX_COMPILER=<c++> -P <this file>
set(scratch ${BUILD_DIR}/package_check)
file(REMOVE_RECURSE ${scratch})

function(run_step what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "${what} failed (${status}):\n${out}")
  endif()
endfunction()

run_step("cmake --install" ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${scratch}/prefix --component cpp)
# Only the package is found: nothing of the source tree is on the include path.
run_step("configuring examples/cpp" ${CMAKE_COMMAND} -S ${EXAMPLES_DIR} -B ${scratch}/build -G ${GENERATOR}
         -DCMAKE_PREFIX_PATH=${scratch}/prefix -DCMAKE_BUILD_TYPE=Release
         -DCMAKE_MAKE_PROGRAM=${MAKE_PROGRAM} -DCMAKE_CXX_COMPILER=${CXX_COMPILER})
run_step("building examples/cpp" ${CMAKE_COMMAND} --build ${scratch}/build)
run_step("running autocast_mlp" ${scratch}/build/autocast_mlp 200)
