# Install rules: the library, its headers and a CMake package prism_e2b::prism_e2b.
include(CMakePackageConfigHelpers)
set(_targets prism_e2b)
if(TARGET prism_e2b_emulator)
  list(APPEND _targets prism_e2b_emulator)
endif()
install(TARGETS ${_targets} EXPORT prism_e2b-targets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
foreach(_exe prism_e2b_cli prism_e2b_local)
  if(TARGET ${_exe})
    install(TARGETS ${_exe} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  endif()
endforeach()
install(DIRECTORY include/prism_e2b DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT prism_e2b-targets NAMESPACE prism_e2b::
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/prism_e2b)
configure_package_config_file(cmake/prism_e2b-config.cmake.in
  ${PROJECT_BINARY_DIR}/prism_e2b-config.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/prism_e2b)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/prism_e2b-config-version.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/prism_e2b-config.cmake
  ${PROJECT_BINARY_DIR}/prism_e2b-config-version.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/prism_e2b)
