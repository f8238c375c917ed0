// Test module of the CLI tests: the real prism-e2b binary against a real local server.
#define BOOST_TEST_MODULE prism_e2b_cli_tests
#include "tsan_suppressions.hpp"

#include <boost/test/unit_test.hpp>
