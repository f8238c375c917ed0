# Fixture for the conformance tests: the SDK pinned in package.json must be
# installed in node_modules (by `npm ci`), at exactly the pinned version.
# Usage: cmake -DDIR=<tests/conformance> -P check_sdk_installed.cmake
file(READ ${DIR}/package.json _pkg)
string(JSON _pinned GET "${_pkg}" dependencies e2b)
set(_installed_pkg ${DIR}/node_modules/e2b/package.json)
if(NOT EXISTS ${_installed_pkg})
  message(FATAL_ERROR "The official E2B SDK is not installed: run `npm ci --prefix ${DIR}` before ctest.")
endif()
file(READ ${_installed_pkg} _installed)
string(JSON _version GET "${_installed}" version)
if(NOT _version STREQUAL _pinned)
  message(FATAL_ERROR "node_modules has e2b ${_version} but package.json pins ${_pinned}: run `npm ci --prefix ${DIR}`.")
endif()
message(STATUS "e2b ${_version} installed")
