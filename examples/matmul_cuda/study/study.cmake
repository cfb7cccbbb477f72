# ember_matmul_cuda_study: the matmul study's CUDA kernels (naive, __shared__-tiled, register-tiled),
# outside the library. GPU programs and tests link it and call
# ember::matmul_cuda_study::register_matmul_cuda_study_kernels(); the examples, the tests and the
# Python extension all include this file, so it defines the target once. Only where Ember is built
# with CUDA. A shared library beside the layers' (build/lib, and the wheel's ember/ folder), so that
# the Python extension can open it on demand, by its C entry point ember_matmul_cuda_study_register,
# without mapping CUDA into every `import ember`.
if(EMBER_WITH_CUDA AND NOT TARGET ember_matmul_cuda_study)
  add_library(ember_matmul_cuda_study SHARED ${CMAKE_CURRENT_LIST_DIR}/kernels.cu ${CMAKE_CURRENT_LIST_DIR}/register.cpp)
  target_link_libraries(ember_matmul_cuda_study PUBLIC ember ember_cuda)
  target_include_directories(ember_matmul_cuda_study PUBLIC ${PROJECT_SOURCE_DIR})
  target_compile_options(ember_matmul_cuda_study PRIVATE $<$<COMPILE_LANGUAGE:CXX>:${EMBER_WARNINGS}>
                         $<$<COMPILE_LANGUAGE:CUDA>:--expt-relaxed-constexpr -Xcompiler=-Wall>)
  set_target_properties(ember_matmul_cuda_study PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/lib
                        INSTALL_RPATH "$ORIGIN")
endif()
