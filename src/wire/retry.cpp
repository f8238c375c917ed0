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

namespace {

/// What the loop does after one attempt.
struct verdict {
    bool retry = false;
    std::optional<std::chrono::seconds> retry_after;
};

verdict judge_status(retry_policy const& p, int status, std::string const* retry_after_header)
{
    verdict v;
    if (status == 429) {
        v.retry_after = parse_retry_after(retry_after_header);
        v.retry = !v.retry_after || *v.retry_after <= p.max_retry_after;
    } else if (p.idempotent && status >= 500 && status != p.no_retry_status) {
        v.retry = true;
    }
    return v;
}

verdict judge_error(retry_policy const& p, error const& e)
{
    auto const ec = e.code();
    // The server closing before a complete answer is a network error too.
    bool const cut = ec == boost::beast::http::error::end_of_stream ||
                     ec == boost::beast::http::error::partial_message || ec == asio::error::eof;
    verdict v;
    v.retry = p.idempotent && ec != make_error_code(errc::cancelled) && ec != make_error_code(errc::limit_exceeded) &&
              (cut || is_retryable(ec));
    return v;
}

/// True when a retry after `delay` still starts before `deadline`.
bool fits(std::chrono::milliseconds delay, call_options::clock::time_point deadline)
{
    return deadline == call_options::clock::time_point::max() || call_options::clock::now() + delay < deadline;
}

/// errc::cancelled when cancelled during the sleep.
asio::awaitable<result<void>> sleep(std::chrono::milliseconds delay)
{
    asio::steady_timer timer(co_await asio::this_coro::executor, delay);
    boost::system::error_code ec;
    try {
        std::tie(ec) = co_await timer.async_wait(asio::as_tuple(asio::use_awaitable));
    } catch (boost::system::system_error const& e) {
        ec = e.code();  // cancelled before the wait started
    }
    if (ec) co_return error(errc::cancelled, "cancelled while waiting to retry");
    co_return result<void>{};
}

class retrying_exchange final : public exchange {
public:
    explicit retrying_exchange(std::shared_ptr<exchange> inner) : inner_(std::move(inner)) {}

    asio::awaitable<result<http_response>> request(origin o, http_request req, call_options opts) override
    {
        for (unsigned n = 0;; ++n) {
            auto r = co_await inner_->request(o, req, opts);
            auto const v =
                r ? judge_status(opts.retry, r->status, r->header("Retry-After")) : judge_error(opts.retry, r.error());
            if (!v.retry || n >= opts.retry.max_retries) co_return r;
            auto const delay = backoff_delay(opts.retry, n, v.retry_after);
            if (!fits(delay, opts.deadline)) co_return r;
            auto slept = co_await sleep(delay);
            if (!slept) co_return slept.error();
        }
    }

    asio::awaitable<result<std::unique_ptr<http_stream>>> open_stream(origin o, http_request req,
                                                                      call_options opts) override
    {
        for (unsigned n = 0;; ++n) {
            auto r = co_await inner_->open_stream(o, req, opts);
            if (!r) co_return r;  // never replayed: the process may have started
            auto const v = (*r)->status() == 429
                               ? judge_status(opts.retry, 429, find_header((*r)->headers(), "Retry-After"))
                               : verdict{};
            if (!v.retry || n >= opts.retry.max_retries) co_return r;
            auto const delay = backoff_delay(opts.retry, n, v.retry_after);
            if (!fits(delay, opts.deadline)) co_return r;
            r->reset();  // the refused stream gives its connection back before the sleep
            auto slept = co_await sleep(delay);
            if (!slept) co_return slept.error();
        }
    }

private:
    std::shared_ptr<exchange> inner_;
};

}  // namespace

std::shared_ptr<exchange> make_retrying(std::shared_ptr<exchange> inner)
{
    return std::make_shared<retrying_exchange>(std::move(inner));
}

}  // namespace prism_e2b::wire
