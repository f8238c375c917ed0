// Test module of the integration tests (the local server, in-process, runs real processes).
#define BOOST_TEST_MODULE prism_e2b_integration_tests
#include <boost/test/unit_test.hpp>

#if defined(__SANITIZE_THREAD__)
// Asio drops the last reference to a type-erased executor (an any_io_executor
// holding a strand) with fetch_sub(release) + atomic_thread_fence(acquire); the
// TSan of g++ 12 does not model the fence (-Wtsan), so the delete that follows is
// reported as a race with the decrement on the other thread. Only that
// destructor is suppressed.
extern "C" char const* __tsan_default_suppressions()
{
    return "race:boost::asio::execution::detail::shared_target_executor::~shared_target_executor\n";
}
#endif
