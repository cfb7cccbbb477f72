# ember_attention_study: the attention study's CPU kernels (Algorithms 0 and 1, forward and backward,
# with byte counters), outside the library. Programs, tests and the Python extension link it and
# call ember::attention_study::register_attention_study_kernels(); each includes this file, so it
# defines the target once.
if(NOT TARGET ember_attention_study)
  add_library(ember_attention_study STATIC ${CMAKE_CURRENT_LIST_DIR}/standard.cpp ${CMAKE_CURRENT_LIST_DIR}/flash.cpp
              ${CMAKE_CURRENT_LIST_DIR}/io_counters.cpp ${CMAKE_CURRENT_LIST_DIR}/register.cpp)
  target_link_libraries(ember_attention_study PUBLIC ember)
  target_include_directories(ember_attention_study PUBLIC ${PROJECT_SOURCE_DIR})
  target_compile_options(ember_attention_study PRIVATE ${EMBER_WARNINGS})
  # Position-independent: the Python extension, a shared module, links it too.
  set_target_properties(ember_attention_study PROPERTIES POSITION_INDEPENDENT_CODE ON)
  if(EMBER_NATIVE)
    target_compile_options(ember_attention_study PRIVATE -march=native)
  endif()
endif()
