// Included once per test module (its main.cpp): TSan suppressions built into the binary.
#ifndef PRISM_E2B_TEST_TSAN_SUPPRESSIONS_HPP
#define PRISM_E2B_TEST_TSAN_SUPPRESSIONS_HPP

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

#endif
