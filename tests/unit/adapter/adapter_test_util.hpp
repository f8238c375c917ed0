// Shared helpers of the adapter unit tests (not a test file: no suite).
#ifndef PRISM_E2B_TESTS_UNIT_ADAPTER_TEST_UTIL_HPP
#define PRISM_E2B_TESTS_UNIT_ADAPTER_TEST_UTIL_HPP

#include <prism_e2b/e2b_sandbox.hpp>

#include "adapter_requests.hpp"
#include "coro_helpers.hpp"
#include "eventually.hpp"
#include "fake_e2b_client.hpp"
#include "run_coro.hpp"

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace prism_e2b::test {

namespace asio = boost::asio;

/// A scripted process that runs until signalled (echoing its stdin when asked).
inline process_script long_running(bool echo = false)
{
    process_script s;
    s.after = process_script::then::wait_for_signal;
    s.echo_stdin = echo;
    return s;
}

// Built outside coroutines: g++ 12 mis-compiles designated initializers with
// string literals inside coroutine bodies ("array used as initializer").
// Variadic, because even a braced list argument inside a coroutine trips it.
template <class... A>
exec_file_request argv(std::string file, A... args)
{
    exec_file_request r;
    r.file = std::move(file);
    (r.args.emplace_back(args), ...);
    return r;
}
/// Braced lists of std::string inside coroutines trip the same g++ 12 bug.
inline std::vector<std::string> N(std::initializer_list<char const*> l) { return {l.begin(), l.end()}; }
inline label_map L(std::initializer_list<std::pair<char const*, char const*>> l)
{
    label_map m;
    for (auto const& [k, v] : l) m.emplace(k, v);
    return m;
}

/// Whether the sandbox admitted at least `n` commands (status().command_count),
/// queued ones included: a predicate for async_eventually.
inline asio::awaitable<bool> admitted_at_least(e2b_sandbox& sb, std::uint32_t n)
{
    auto s = co_await sb.async_status();
    co_return s && s->command_count >= n;
}

inline e2b_sandbox_options fake_options(std::shared_ptr<fake_e2b_client> fake)
{
    e2b_sandbox_options o;
    o.client = std::move(fake);
    return o;
}

inline asio::awaitable<std::shared_ptr<e2b_sandbox>> make_sandbox(asio::any_io_executor ex,
                                                                  std::shared_ptr<fake_e2b_client> fake,
                                                                  e2b_sandbox_options o)
{
    o.client = fake;
    auto r = co_await async_create_e2b_sandbox(ex, std::move(o));
    BOOST_TEST_REQUIRE(r.has_value());
    co_return *r;
}

/// Not a coroutine, so the default options are an ordinary temporary.
inline asio::awaitable<std::shared_ptr<e2b_sandbox>> make_sandbox(asio::any_io_executor ex,
                                                                  std::shared_ptr<fake_e2b_client> fake)
{
    return make_sandbox(std::move(ex), std::move(fake), e2b_sandbox_options());
}

}  // namespace prism_e2b::test

#endif
