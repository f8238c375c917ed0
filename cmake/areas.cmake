# The library is built from one object library per area, and every area (and
# the emulator and the CLI) has its own include root: a directory in the build
# tree holding only `<area>/` (a link to src/<area>). So
# `#include "wire/http_transport.hpp"` compiles only where wire's internals may
# be seen: in wire itself, in the areas that name it in USES, and in its tests.
# The allowed directions (src/CMakeLists.txt):
#   protocol <- core <- wire (core: the semaphore, spawn_op);  core, protocol <-
#   adapter (spawn_op, the UTF-8 check, on_strand);  cli: public API only;  emulator: public API +
#   protocol.   libprism_e2b = protocol+core+wire+adapter.

# prism_e2b_include_root(<name>): the INTERFACE target prism_e2b_<name>_headers
# whose include root exposes ${CMAKE_CURRENT_SOURCE_DIR} as `<name>/`.
function(prism_e2b_include_root name)
  set(_root ${PROJECT_BINARY_DIR}/include_roots/${name})
  file(MAKE_DIRECTORY ${_root})
  file(CREATE_LINK ${CMAKE_CURRENT_SOURCE_DIR} ${_root}/${name} SYMBOLIC)
  add_library(prism_e2b_${name}_headers INTERFACE)
  target_include_directories(prism_e2b_${name}_headers INTERFACE $<BUILD_INTERFACE:${_root}>)
endfunction()

# prism_e2b_area(<area> SOURCES <file>... [USES <area>...]): the OBJECT library
# prism_e2b_<area>, which may include its own and its USES' internal headers.
function(prism_e2b_area area)
  cmake_parse_arguments(A "" "" "SOURCES;USES" ${ARGN})
  if(NOT A_SOURCES)
    message(FATAL_ERROR "prism_e2b_area(${area}): no SOURCES")
  endif()
  prism_e2b_include_root(${area})
  add_library(prism_e2b_${area} OBJECT ${A_SOURCES})
  target_link_libraries(prism_e2b_${area}
    PUBLIC prism_e2b_public_headers prism_e2b_${area}_headers
    PRIVATE prism_e2b_project_options prism_e2b_library_options)
  prism_e2b_unity(prism_e2b_${area})
  foreach(_used ${A_USES})
    target_link_libraries(prism_e2b_${area} PUBLIC prism_e2b_${_used}_headers)
  endforeach()
endfunction()
