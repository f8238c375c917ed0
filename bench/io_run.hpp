// Runs one coroutine to completion on a fresh io_context with `threads` threads.
#ifndef PRISM_E2B_BENCH_IO_RUN_HPP
#define PRISM_E2B_BENCH_IO_RUN_HPP

#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>

#include <exception>
#include <string>
#include <thread>
#include <vector>

namespace prism_e2b::bench {

/// `body(executor)` returns awaitable<std::string> (an error text, empty: ok).
template <class Body>
std::string run_io(unsigned threads, Body body)
{
    boost::asio::io_context ioc(static_cast<int>(threads));
    std::string out;
    std::exception_ptr failure;
    boost::asio::co_spawn(ioc, body(ioc.get_executor()), [&](std::exception_ptr e, std::string r) {
        failure = e;
        out = std::move(r);
    });
    std::vector<std::thread> pool;
    for (unsigned i = 1; i < threads; ++i) pool.emplace_back([&] { ioc.run(); });
    ioc.run();
    for (auto& t : pool) t.join();
    if (failure) {
        try {
            std::rethrow_exception(failure);
        } catch (std::exception const& e) {
            return std::string("exception: ") + e.what();
        }
    }
    return out;
}

}  // namespace prism_e2b::bench

#endif
