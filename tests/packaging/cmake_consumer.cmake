# Configures, builds and runs tests/packaging/cmake_consumer against PREFIX.
file(REMOVE_RECURSE ${WORK_DIR})
# A sanitized library needs a sanitized consumer (the runtime comes with the link flag).
set(sanitize_args)
if(SANITIZE)
  set(_flags -fsanitize=${SANITIZE})
  if(CXX MATCHES "clang" AND SANITIZE MATCHES "undefined")
    # As the library is built (cmake/project_options.cmake): clang 14 cannot emit
    # -fsanitize=function's data for coroutine frames.
    string(APPEND _flags " -fno-sanitize=function")
  endif()
  set(sanitize_args "-DCMAKE_CXX_FLAGS=${_flags}" -DCMAKE_EXE_LINKER_FLAGS=-fsanitize=${SANITIZE})
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -S ${SOURCE_DIR} -B ${WORK_DIR} -G Ninja
  -DCMAKE_CXX_COMPILER=${CXX} -DCMAKE_PREFIX_PATH=${PREFIX} -DCMAKE_BUILD_TYPE=Release ${sanitize_args}
  RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "consumer configure failed")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --build ${WORK_DIR} RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "consumer build failed")
endif()
execute_process(COMMAND ${WORK_DIR}/consumer RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "consumer run failed")
endif()
# The README's program, when the package has the local server: against the
# embedded server (no E2B_API_KEY), its sandbox init found as the README says.
if(EXISTS ${WORK_DIR}/hello)
  execute_process(COMMAND ${CMAKE_COMMAND} -E env E2B_API_KEY= PRISM_E2B_ENVD=${PREFIX}/bin/prism-e2b-envd
    ${WORK_DIR}/hello RESULT_VARIABLE rc OUTPUT_VARIABLE out)
  if(rc OR NOT out STREQUAL "hello from Linux\n")
    message(FATAL_ERROR "the README's program failed (exit ${rc}): '${out}'")
  endif()
endif()
