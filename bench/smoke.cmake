# Bench smoke: run one scenario with tiny N, then validate the JSON schema and
# that the SVG exists and is an <svg> document. Times are never asserted.
file(REMOVE_RECURSE ${OUT_DIR})
file(MAKE_DIRECTORY ${OUT_DIR})
# PREFIX: arguments before the options (e.g. "bench;all" for the prism-e2b CLI);
# CHECK_PREFIX: the same for the --check step ("bench" for the CLI).
set(_args ${PREFIX} --n 3 --json ${OUT_DIR}/out.json --svg ${OUT_DIR}/out.svg --quiet --smoke)
# TLS_LOCAL: prism-e2b-local, started over TLS (a test CA) through a wrapper given as
# --server-bin; both clients trust the CA through PRISM_E2B_CA_FILE alone.
if(TLS_LOCAL)
  set(DIR ${OUT_DIR}/pki)
  include(${PKI_SCRIPT})
  file(WRITE ${OUT_DIR}/local-tls.sh
    "#!/bin/sh\nexec '${TLS_LOCAL}' --tls-cert '${DIR}/server.pem' --tls-key '${DIR}/server.key' \"$@\"\n")
  file(CHMOD ${OUT_DIR}/local-tls.sh PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE)
  list(APPEND _args --server-bin ${OUT_DIR}/local-tls.sh)
  set(ENV{PRISM_E2B_CA_FILE} ${DIR}/ca.pem)
endif()
if(EXISTS ${JS_DIR}/node_modules/e2b)
  list(APPEND _args --js)
endif()
execute_process(COMMAND ${BENCH} ${_args} RESULT_VARIABLE _rc)
if(NOT _rc EQUAL 0)
  message(FATAL_ERROR "benchmark failed: ${_rc}")
endif()
execute_process(COMMAND ${BENCH} ${CHECK_PREFIX} --check ${OUT_DIR}/out.json ${OUT_DIR}/out.svg RESULT_VARIABLE _rc)
if(NOT _rc EQUAL 0)
  message(FATAL_ERROR "report check failed: ${_rc}")
endif()
