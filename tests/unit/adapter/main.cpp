// Test module of the adapter unit tests.
#define BOOST_TEST_MODULE prism_e2b_adapter_tests
#include "tsan_suppressions.hpp"

#include <boost/test/unit_test.hpp>
