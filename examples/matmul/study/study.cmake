# ember_matmul_study: the matmul study's CPU kernels (naive, ikj, blocked), outside the library.
# Programs and tests link it and call ember::matmul_study::register_matmul_study_kernels(); the
# examples and the tests both include this file, so it defines the target once.
if(NOT TARGET ember_matmul_study)
  add_library(ember_matmul_study STATIC ${CMAKE_CURRENT_LIST_DIR}/naive.cpp ${CMAKE_CURRENT_LIST_DIR}/ikj.cpp
              ${CMAKE_CURRENT_LIST_DIR}/blocked.cpp ${CMAKE_CURRENT_LIST_DIR}/register.cpp)
  target_link_libraries(ember_matmul_study PUBLIC ember)
  target_include_directories(ember_matmul_study PUBLIC ${PROJECT_SOURCE_DIR})
  target_compile_options(ember_matmul_study PRIVATE ${EMBER_WARNINGS})
  if(EMBER_NATIVE)
    target_compile_options(ember_matmul_study PRIVATE -march=native)
  endif()
endif()
