# Makes a test CA and a server certificate for 127.0.0.1 / localhost in DIR with
# the openssl CLI, for the conformance run over TLS (node trusts the CA through
# NODE_EXTRA_CA_CERTS). Run as: cmake -DDIR=<dir> -P make_test_pki.cmake
find_program(OPENSSL openssl REQUIRED)
file(REMOVE_RECURSE ${DIR})
file(MAKE_DIRECTORY ${DIR})
file(WRITE ${DIR}/server.ext
  "subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n")
function(run)
  execute_process(COMMAND ${OPENSSL} ${ARGN} WORKING_DIRECTORY ${DIR} RESULT_VARIABLE rc OUTPUT_QUIET ERROR_QUIET)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "openssl ${ARGN} failed (${rc})")
  endif()
endfunction()
run(req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem -days 2 -subj "/CN=prism-e2b conformance CA"
  -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign")
run(req -newkey rsa:2048 -nodes -keyout server.key -out server.csr -subj "/CN=localhost")
run(x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out server.pem -days 2 -extfile server.ext)
