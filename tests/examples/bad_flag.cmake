# Runs PROGRAM with ARGS (a ;-list) and expects a non-zero exit and NEEDLE (the flag's name) in
# stderr: a bad flag must stop the program with a message naming it, never run or crash.
#   cmake -DPROGRAM=... -DARGS="--lr;1e300" -DNEEDLE=--lr -P bad_flag.cmake
execute_process(COMMAND ${PROGRAM} ${ARGS} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 60)
if(rc EQUAL 0)
  message(FATAL_ERROR "${PROGRAM} ${ARGS}: exited 0 (expected a failure naming ${NEEDLE})\nstdout: ${out}")
endif()
if(NOT rc MATCHES "^[0-9]+$")
  message(FATAL_ERROR "${PROGRAM} ${ARGS}: did not exit normally (${rc}); expected an error naming ${NEEDLE}")
endif()
string(FIND "${err}" "${NEEDLE}" at)
if(at EQUAL -1)
  message(FATAL_ERROR "${PROGRAM} ${ARGS}: stderr does not name ${NEEDLE}:\n${err}")
endif()
