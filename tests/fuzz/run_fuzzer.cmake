# Runs one libFuzzer target on a fresh copy of its seed corpus, inside the
# build tree: the source tree is never written. Crash, leak and timeout
# reproducers land in ${WORK}/artifacts.
#   cmake -DFUZZER=... -DSEEDS=dir -DDICT=file -DWORK=dir "-DARGS=a;b" -P run_fuzzer.cmake
foreach(var FUZZER SEEDS DICT WORK)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "run_fuzzer.cmake: -D${var}= is required")
  endif()
endforeach()

file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK}/artifacts)
file(COPY ${SEEDS}/ DESTINATION ${WORK}/corpus)

execute_process(
  COMMAND ${FUZZER} ${ARGS} -dict=${DICT} -print_final_stats=1
          -artifact_prefix=${WORK}/artifacts/ ${WORK}/corpus
  RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  file(GLOB found ${WORK}/artifacts/*)
  message(FATAL_ERROR "${FUZZER} failed (${rc}); reproducers: ${found}")
endif()
