// Test helper: a client-side io_context run by one thread of its own, for the
// completion tokens that are used from outside any coroutine (use_future,
// plain callbacks).
#ifndef PRISM_E2B_TESTS_COMMON_CLIENT_THREAD_HPP
#define PRISM_E2B_TESTS_COMMON_CLIENT_THREAD_HPP

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>

#include <thread>

namespace prism_e2b::test {

/// An io_context kept running (a work guard) by its own thread until destroyed;
/// the destructor lets the pending work finish and joins the thread.
struct client_thread {
    boost::asio::io_context ioc;
    boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work{ioc.get_executor()};
    std::thread runner{[this] { ioc.run(); }};
    ~client_thread()
    {
        work.reset();
        runner.join();
    }
};

}  // namespace prism_e2b::test

#endif
