# A shared libprism_e2b exports the public API and hides the internals
# (-fvisibility=hidden + PRISM_E2B_API).
execute_process(COMMAND ${NM} -DC --defined-only ${LIBRARY} OUTPUT_VARIABLE _syms RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "nm failed on ${LIBRARY}")
endif()
foreach(_must "prism_e2b::detail::do_create_e2b_sandbox" "prism_e2b::e2b::make_client" "prism_e2b::secret_redactor::global"
    "typeinfo for prism_e2b::exception")
  string(FIND "${_syms}" "${_must}" _at)
  if(_at EQUAL -1)
    message(FATAL_ERROR "${LIBRARY} does not export ${_must}")
  endif()
endforeach()
# A symbol whose own name (not a template argument) is in an internal namespace.
# The async model's compiled initiations (detail::do_x, called by the header's
# async_x templates) are public by design; every other internal name is a leak.
string(REGEX REPLACE "\n[0-9a-f]+ [A-Za-z] prism_e2b::detail::do_[a-z0-9_]+\\([^\n]*" "" _checked "\n${_syms}")
string(REGEX MATCHALL "\n[0-9a-f]+ [A-Za-z] [^<(\n]*prism_e2b::(wire|detail|adapter)::[^\n]*" _leaks "${_checked}")
if(_leaks)
  list(LENGTH _leaks _n)
  list(SUBLIST _leaks 0 5 _some)
  string(REPLACE ";" "\n" _some "${_some}")
  message(FATAL_ERROR "${LIBRARY} exports ${_n} internal symbols, e.g.:\n${_some}")
endif()
