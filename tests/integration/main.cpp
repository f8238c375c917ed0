// Test module of the integration tests (the local server, in-process, runs real processes).
#define BOOST_TEST_MODULE prism_e2b_integration_tests
#include "tsan_suppressions.hpp"

#include <boost/test/unit_test.hpp>
