// Test module of the async model's test (async_model.cpp), built apart from the
// rest of the integration tests so the clang + ASan leg compiles only this one.
#define BOOST_TEST_MODULE prism_e2b_async_model_tests
#include "tsan_suppressions.hpp"

#include <boost/test/unit_test.hpp>
