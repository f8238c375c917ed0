# Install rules, in two components: runtime (the shared library, the
# executables, LICENSE) and development (headers, static archives, the CMake
# package, prism_e2b.pc, CHANGELOG).
include(CMakePackageConfigHelpers)
set(_cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/prism_e2b)
set(_doc_dir ${CMAKE_INSTALL_DATADIR}/doc/prism_e2b)

set(_targets prism_e2b)
if(TARGET prism_e2b_emulator)
  list(APPEND _targets prism_e2b_emulator)
endif()
install(TARGETS ${_targets} EXPORT prism_e2b-targets
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT runtime
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT runtime NAMELINK_COMPONENT development
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT development)
foreach(_exe prism_e2b_cli prism_e2b_local prism_e2b_envd prism_e2b_bench)
  if(TARGET ${_exe})
    install(TARGETS ${_exe} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT runtime)
  endif()
endforeach()
# `prism-e2b bench --js` finds the JS side here (`npm ci --prefix <prefix>/share/prism-e2b/bench/js`).
if(TARGET prism_e2b_bench)
  install(DIRECTORY bench/js/ DESTINATION ${CMAKE_INSTALL_DATADIR}/prism-e2b/bench/js COMPONENT runtime
    PATTERN node_modules EXCLUDE)
endif()

set(_exclude)
if(NOT TARGET prism_e2b_emulator)
  set(_exclude PATTERN local_server.hpp EXCLUDE)
endif()
install(DIRECTORY include/prism_e2b DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT development ${_exclude})
install(FILES ${PROJECT_BINARY_DIR}/include/prism_e2b/version.hpp
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/prism_e2b COMPONENT development)

install(EXPORT prism_e2b-targets NAMESPACE prism_e2b:: DESTINATION ${_cmake_dir} COMPONENT development)
configure_package_config_file(cmake/prism_e2b-config.cmake.in ${PROJECT_BINARY_DIR}/prism_e2b-config.cmake
  INSTALL_DESTINATION ${_cmake_dir})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/prism_e2b-config-version.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/prism_e2b-config.cmake ${PROJECT_BINARY_DIR}/prism_e2b-config-version.cmake
  DESTINATION ${_cmake_dir} COMPONENT development)

# prism_e2b.pc, relocatable (prefix from ${pcfiledir}). A static libprism_e2b
# puts its dependencies in Libs, a shared one in Libs.private (--static).
set(_pc_dir ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
if(IS_ABSOLUTE ${CMAKE_INSTALL_LIBDIR})
  set(PRISM_E2B_PC_PREFIX ${CMAKE_INSTALL_PREFIX})
else()
  file(RELATIVE_PATH _up /root/${_pc_dir} /root)
  string(REGEX REPLACE "/$" "" _up "${_up}")
  set(PRISM_E2B_PC_PREFIX "\${pcfiledir}/${_up}")
endif()
list(TRANSFORM PRISM_E2B_PUBLIC_DEFINES PREPEND -D OUTPUT_VARIABLE _defines)
string(JOIN " " PRISM_E2B_PC_CFLAGS -std=c++20 ${_defines})
set(_deps "$<TARGET_LINKER_FILE:Boost::json> $<TARGET_LINKER_FILE:Boost::url>")
if(BUILD_SHARED_LIBS)
  set(PRISM_E2B_PC_REQUIRES Requires.private)
  set(PRISM_E2B_PC_LIBS "")
  set(PRISM_E2B_PC_LIBS_PRIVATE ${_deps})
else()
  set(PRISM_E2B_PC_REQUIRES Requires)
  set(PRISM_E2B_PC_LIBS ${_deps})
  set(PRISM_E2B_PC_LIBS_PRIVATE "")
endif()
configure_file(cmake/templates/prism_e2b.pc.in ${PROJECT_BINARY_DIR}/prism_e2b.pc.in @ONLY)
file(GENERATE OUTPUT ${PROJECT_BINARY_DIR}/prism_e2b.pc INPUT ${PROJECT_BINARY_DIR}/prism_e2b.pc.in)
install(FILES ${PROJECT_BINARY_DIR}/prism_e2b.pc DESTINATION ${_pc_dir} COMPONENT development)

install(FILES LICENSE DESTINATION ${_doc_dir} COMPONENT runtime)
install(FILES CHANGELOG.md DESTINATION ${_doc_dir} COMPONENT development)
