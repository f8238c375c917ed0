# vcpkg port of prism-e2b, used as an overlay port from this repository:
#   vcpkg install prism-e2b --overlay-ports=<repo>/ports
# (a registry port would use vcpkg_from_github instead of the checkout).
set(SOURCE_PATH "${CMAKE_CURRENT_LIST_DIR}/../..")

vcpkg_check_features(OUT_FEATURE_OPTIONS FEATURE_OPTIONS
  FEATURES
    cli PRISM_E2B_BUILD_CLI
    local-server PRISM_E2B_BUILD_LOCAL_SERVER)

vcpkg_cmake_configure(
  SOURCE_PATH "${SOURCE_PATH}"
  OPTIONS
    ${FEATURE_OPTIONS}
    -DPRISM_E2B_BUILD_TESTS=OFF
    -DPRISM_E2B_BUILD_EXAMPLES=OFF
    -DPRISM_E2B_BUILD_BENCH=OFF
    -DPRISM_E2B_BUILD_DOCS=OFF
    -DPRISM_E2B_INSTALL=ON)
vcpkg_cmake_install()
vcpkg_cmake_config_fixup(PACKAGE_NAME prism_e2b CONFIG_PATH lib/cmake/prism_e2b)
vcpkg_fixup_pkgconfig()

set(_tools)
if("cli" IN_LIST FEATURES)
  list(APPEND _tools prism-e2b)
endif()
if("local-server" IN_LIST FEATURES)
  list(APPEND _tools prism-e2b-local)
endif()
if(_tools)
  vcpkg_copy_tools(TOOL_NAMES ${_tools} AUTO_CLEAN)
endif()

file(REMOVE_RECURSE "${CURRENT_PACKAGES_DIR}/debug/include" "${CURRENT_PACKAGES_DIR}/debug/share")
file(REMOVE_RECURSE "${CURRENT_PACKAGES_DIR}/share/doc")
vcpkg_install_copyright(FILE_LIST "${SOURCE_PATH}/LICENSE")
