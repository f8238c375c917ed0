#include "wire/retry.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/http/error.hpp>

#include <algorithm>
#include <random>
#include <tuple>

namespace asio = boost::asio;

namespace prism_e2b::wire {

std::optional<std::chrono::seconds> parse_retry_after(std::string const* value) noexcept
{
    if (!value) return std::nullopt;
    std::string_view v = *value;
    while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.remove_prefix(1);
    while (!v.empty() && (v.back() == ' ' || v.back() == '\t')) v.remove_suffix(1);
    if (v.empty() || v.size() > 9 || !std::all_of(v.begin(), v.end(), [](char c) { return c >= '0' && c <= '9'; }))
        return std::nullopt;  // an HTTP date or garbage: not honoured
    return std::chrono::seconds(std::stol(std::string(v)));
}

std::chrono::milliseconds backoff_delay(retry_policy const& p, unsigned attempt,
                                        std::optional<std::chrono::seconds> retry_after)
{
    if (retry_after) return std::chrono::duration_cast<std::chrono::milliseconds>(*retry_after);
    auto cap = p.base_delay.count() << std::min(attempt, 20u);
    cap = std::min<long long>(cap, p.max_delay.count());
    thread_local std::mt19937_64 rng{std::random_device{}()};
    std::uniform_int_distribution<long long> dist(0, std::max<long long>(0, cap));
    return std::chrono::milliseconds(dist(rng));
}

asio::awaitable<result<http_response>> with_retries(retry_policy policy,
                                                    std::function<asio::awaitable<result<http_response>>()> attempt)
{
    for (unsigned n = 0;; ++n) {
        auto r = co_await attempt();
        bool retry = false;
        std::optional<std::chrono::seconds> retry_after;
        if (r) {
            int const s = r->status;
            if (s == 429) {
                retry_after = parse_retry_after(r->header("Retry-After"));
                retry = !retry_after || *retry_after <= policy.max_retry_after;
            } else if (policy.idempotent && s >= 500 && s != policy.no_retry_status) {
                retry = true;
            }
        } else {
            auto const ec = r.error().code();  // result::error() returns a copy
            // The server closing before a complete answer is a network error too.
            bool const cut = ec == boost::beast::http::error::end_of_stream ||
                             ec == boost::beast::http::error::partial_message || ec == asio::error::eof;
            retry = policy.idempotent && ec != make_error_code(errc::cancelled) && (cut || is_retryable(ec));
        }
        if (!retry || n >= policy.max_retries) co_return r;
        asio::steady_timer timer(co_await asio::this_coro::executor, backoff_delay(policy, n, retry_after));
        boost::system::error_code ec;
        try {
            std::tie(ec) = co_await timer.async_wait(asio::as_tuple(asio::use_awaitable));
        } catch (boost::system::system_error const& e) {
            ec = e.code();  // cancelled before the wait started
        }
        if (ec) co_return error(errc::cancelled, "cancelled while waiting to retry");
    }
}

}  // namespace prism_e2b::wire
