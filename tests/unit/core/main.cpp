// Test module of the core unit tests (contract types, errors, redaction, limits,
// governor, process refs).
#define BOOST_TEST_MODULE prism_e2b_core_tests
#include "tsan_suppressions.hpp"

#include <boost/test/unit_test.hpp>
