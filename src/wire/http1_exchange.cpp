#include "wire/http1_exchange.hpp"

#include "wire/body_decoder.hpp"
#include "wire/transport_error.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/string.hpp>
#include <boost/beast/http/buffer_body.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/write.hpp>

#include <algorithm>

namespace asio = boost::asio;
namespace http = boost::beast::http;

namespace prism_e2b::wire {

beast_request to_beast(origin const& o, http_request const& r, bool accept_encoding)
{
    beast_request out;
    auto verb = http::string_to_verb(r.method);
    if (verb == http::verb::unknown)
        out.method_string(r.method);
    else
        out.method(verb);
    out.target(o.base_path + r.target);
    out.version(11);
    out.set(http::field::host, o.host_header());
    for (auto const& [k, v] : r.headers) out.insert(k, v);
    if (accept_encoding && !find_header(r.headers, "Accept-Encoding"))
        out.set(http::field::accept_encoding, accepted_encodings);
    out.body() = r.body;
    out.keep_alive(true);
    out.prepare_payload();
    if (r.body_stream) out.content_length(r.body_stream->size());  // the body follows the head, streamed
    return out;
}

header_list from_beast(http::fields const& f)
{
    header_list out;
    for (auto const& h : f) out.emplace_back(std::string(h.name_string()), std::string(h.value()));
    return out;
}

time_point earliest(time_point deadline, std::chrono::milliseconds step) noexcept
{
    if (step.count() <= 0) return deadline;
    auto const now = std::chrono::steady_clock::now();
    if (deadline - now <= step) return deadline;
    return now + step;
}

namespace {

/// Writes the head of `req`, then `body` piece by piece, each piece under the
/// idle timeout (a large upload is bounded by progress, not by the head's bound).
template <class Stream>
asio::awaitable<result<void>> write_streamed(Stream& s, connection& c, beast_request const& req, body_source& body,
                                             exchange_bounds const& bounds, std::string const& what)
{
    auto cs = co_await asio::this_coro::cancellation_state;
    if (auto r = body.rewind(); !r) co_return error(r.error().code(), what + ": " + r.error().message());
    c.expire_at(earliest(bounds.deadline, bounds.idle_timeout));
    http::request_serializer<http::string_body> sr(req);
    auto [hec, hn] = co_await http::async_write_header(s, sr, asio::as_tuple(asio::use_awaitable));
    if (hec) co_return io_error(hec, cs, what);
    std::uint64_t sent = 0;
    for (;;) {
        auto piece = body.next();
        if (!piece) co_return error(piece.error().code(), what + ": " + piece.error().message());
        if (piece->empty()) break;
        sent += piece->size();
        if (sent > body.size()) break;
        c.expire_at(earliest(bounds.deadline, bounds.idle_timeout));
        auto [ec, n] = co_await asio::async_write(s, asio::buffer(piece->data(), piece->size()),
                                                  asio::as_tuple(asio::use_awaitable));
        if (ec) co_return io_error(ec, cs, what);
    }
    if (sent != body.size())
        co_return error(errc::invalid_argument, what + ": the body source yielded " + std::to_string(sent) +
                                                    " bytes, not the " + std::to_string(body.size()) + " it announced");
    co_return result<void>{};
}

template <class Stream>
asio::awaitable<result<http_response>> exchange_stream(Stream& s, connection& c, beast_request const& req,
                                                       exchange_bounds bounds, exchange_progress& progress,
                                                       std::string const& what, body_source* upload)
{
    auto cs = co_await asio::this_coro::cancellation_state;
    if (upload) {
        if (auto w = co_await write_streamed(s, c, req, *upload, bounds, what); !w) co_return w.error();
        c.expire_at(earliest(bounds.deadline, bounds.header_timeout));  // the head follows the last piece
    } else {
        c.expire_at(earliest(bounds.deadline, bounds.header_timeout));
        auto [wec, wn] = co_await http::async_write(s, req, asio::as_tuple(asio::use_awaitable));
        if (wec) co_return io_error(wec, cs, what);
    }
    http::response_parser<http::buffer_body> p;
    p.body_limit(bounds.max_body);  // raw bytes; a Content-Length over it fails with the head
    auto [hec, hn] = co_await http::async_read_header(s, c.buffer, p, asio::as_tuple(asio::use_awaitable));
    progress.got_bytes = hn > 0 || p.got_some();
    if (hec) co_return io_error(hec, cs, what);
    std::optional<std::string> encoding;
    if (auto it = p.get().find(http::field::content_encoding); it != p.get().end()) encoding = std::string(it->value());
    auto const cl = p.content_length();
    std::optional<std::uint64_t> length;
    if (cl) length = *cl;
    auto decoder = body_decoder::create(encoding ? &*encoding : nullptr, bounds.max_body, length);
    if (!decoder) co_return error(decoder.error().code(), what + ": " + decoder.error().message());
    // A compressed body is bounded by its decoded size (the decoder's cap);
    // the raw bound only stops a stream that decodes to nothing forever.
    if (decoder->decodes()) p.body_limit(std::max<std::size_t>(bounds.max_body, 1u << 20) * 2);
    char buf[16384];
    while (!p.is_done()) {
        p.get().body().data = buf;
        p.get().body().size = sizeof buf;
        c.expire_at(earliest(bounds.deadline, bounds.idle_timeout));
        auto [ec, n] = co_await http::async_read_some(s, c.buffer, p, asio::as_tuple(asio::use_awaitable));
        if (ec == http::error::need_buffer) ec = {};
        auto const got = sizeof buf - p.get().body().size;
        if (got > 0) {
            if (auto fed = decoder->feed(std::string_view(buf, got)); !fed)
                co_return error(fed.error().code(), what + ": " + fed.error().message());
        }
        if (ec) co_return io_error(ec, cs, what);
    }
    auto body = decoder->finish();
    if (!body) co_return error(body.error().code(), what + ": " + body.error().message());
    auto& msg = p.get();
    progress.keep_alive = msg.keep_alive();
    http_response out;
    out.status = static_cast<int>(msg.result_int());
    out.headers = from_beast(msg.base());
    if (decoder->decodes()) {
        // The body is decoded: its encoding and length no longer describe it.
        std::erase_if(out.headers, [](auto const& h) {
            return boost::beast::iequals(h.first, "Content-Encoding") ||
                   boost::beast::iequals(h.first, "Content-Length");
        });
    }
    out.body = std::move(*body);
    co_return out;
}

}  // namespace

asio::awaitable<result<http_response>> exchange_on(connection& c, beast_request const& req, exchange_bounds bounds,
                                                   exchange_progress& progress, std::string what, body_source* upload)
{
    if (c.tls) co_return co_await exchange_stream(*c.tls, c, req, bounds, progress, what, upload);
    co_return co_await exchange_stream(*c.plain, c, req, bounds, progress, what, upload);
}

}  // namespace prism_e2b::wire
