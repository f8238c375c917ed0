// Test module of the wire unit tests.
#define BOOST_TEST_MODULE prism_e2b_wire_tests
#include "tsan_suppressions.hpp"

#include <boost/test/unit_test.hpp>
