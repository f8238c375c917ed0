# Replays a fuzz target over its committed corpus for a bounded number of runs.
# New inputs go to WORK/new (never into the committed corpus), crash/leak/timeout
# inputs to WORK/ (the failure message names the file).
# The seed is fixed (SEED): the same code meets the same mutations on every run,
# so a CI replay never fails on a new find by chance (open-ended fuzzing: README.md).
#   cmake -DFUZZER=<exe> -DCORPUS=<dir> -DWORK=<dir> -DRUNS=<n> -DSECONDS=<s> -DSEED=<n> [-DDICT=<file>] -P replay.cmake
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK}/new)
set(_args -seed=${SEED} -runs=${RUNS} -max_total_time=${SECONDS} -timeout=10 -rss_limit_mb=2560 -max_len=65536
  -print_final_stats=1 -artifact_prefix=${WORK}/)
if(DICT)
  list(APPEND _args -dict=${DICT})
endif()
execute_process(COMMAND ${FUZZER} ${_args} ${WORK}/new ${CORPUS} RESULT_VARIABLE _rc)
if(NOT _rc EQUAL 0)
  file(GLOB _artifacts ${WORK}/crash-* ${WORK}/leak-* ${WORK}/timeout-* ${WORK}/oom-* ${WORK}/slow-unit-*)
  message(FATAL_ERROR "${FUZZER} failed (${_rc}); reproducer(s): ${_artifacts}")
endif()
