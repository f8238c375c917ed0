// The binaries of this build that tests run as child processes. Each function is
// defined in a generated file (cmake/path_functions.cmake) that only the tests
// needing it link; PRISM_E2B_HAVE_<NAME> says whether a test has it.
#ifndef PRISM_E2B_TESTS_COMMON_BUILT_BINARIES_HPP
#define PRISM_E2B_TESTS_COMMON_BUILT_BINARIES_HPP

/// prism-e2b-local (PRISM_E2B_HAVE_LOCAL_BINARY).
char const* prism_e2b_local_binary();
/// prism-e2b, the CLI (PRISM_E2B_HAVE_CLI_BINARY).
char const* prism_e2b_cli_binary();

#endif
