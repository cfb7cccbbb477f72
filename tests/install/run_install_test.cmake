# Installs Ember into a scratch prefix, then configures, builds and runs tests/install/consumer
# against it with find_package(Ember), as a user's own project would.
file(REMOVE_RECURSE ${WORK_DIR})
execute_process(COMMAND ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${WORK_DIR}/prefix RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "cmake --install failed (${rc})")
endif()
# The package must stand alone: no absolute paths of this machine's libraries, nothing of CUDA,
# OpenBLAS or the header-only private dependencies.
file(GLOB_RECURSE exported ${WORK_DIR}/prefix/*/cmake/Ember/*.cmake)
foreach(f ${exported})
  file(READ ${f} text)
  foreach(bad "/usr/" "CUDA" "cuda" "openblas" "nlohmann" "PCRE2" "ZLIB" "MPI")
    string(FIND "${text}" "${bad}" at)
    if(NOT at EQUAL -1)
      message(FATAL_ERROR "the installed package file ${f} mentions '${bad}'")
    endif()
  endforeach()
endforeach()
# As on a machine without a CUDA toolkit: the package must configure and link all the same.
execute_process(COMMAND ${CMAKE_COMMAND} -S ${SOURCE_DIR}/tests/install/consumer -B ${WORK_DIR}/build
                        -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix -DCMAKE_DISABLE_FIND_PACKAGE_CUDAToolkit=ON
                        RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "configuring the consumer failed (${rc})")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --build ${WORK_DIR}/build RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "building the consumer failed (${rc})")
endif()
execute_process(COMMAND ${WORK_DIR}/build/consumer OUTPUT_VARIABLE out RESULT_VARIABLE rc)
message(STATUS "consumer printed: ${out}")
if(rc OR NOT out MATCHES "dy/dx = 6")
  message(FATAL_ERROR "the consumer program failed (${rc}): ${out}")
endif()
