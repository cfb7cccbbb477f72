# ember_sparse_cuda_study: the sparse study's cuSPARSE and cuBLAS code on raw device arrays
# (cusparse.h), outside the library, which has no sparse CUDA op. bench_sparse and the tests link
# it; both include this file, so it defines the target once. Only where Ember is built with CUDA.
# It links cuSPARSE itself, so that libember_cuda.so does not map it for programs that never ask.
if(EMBER_WITH_CUDA AND NOT TARGET ember_sparse_cuda_study)
  add_library(ember_sparse_cuda_study STATIC ${CMAKE_CURRENT_LIST_DIR}/cusparse.cu)
  target_link_libraries(ember_sparse_cuda_study PUBLIC ember ember_cuda CUDA::cusparse CUDA::cublas CUDA::cudart)
  target_include_directories(ember_sparse_cuda_study PUBLIC ${PROJECT_SOURCE_DIR})
  target_compile_options(ember_sparse_cuda_study PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:--expt-relaxed-constexpr -Xcompiler=-Wall>)
endif()
