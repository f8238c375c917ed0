// Drives an nghttp2 session (sans-io: bytes in, bytes out) over an Asio stream,
// for both the client (wire/h2_connection) and the local server
// (emulator/h2_connection): a read loop feeds what arrives to the session, a
// write loop sends what the session has to send and sleeps until notify().
// Everything runs on one strand, the session's.
#ifndef PRISM_E2B_PROTOCOL_H2_PUMP_HPP
#define PRISM_E2B_PROTOCOL_H2_PUMP_HPP

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/buffer.hpp>
#include <boost/asio/error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/system/error_code.hpp>

#include <array>
#include <chrono>
#include <cstdint>
#include <functional>
#include <nghttp2/nghttp2.h>
#include <string>

namespace prism_e2b::protocol {

/// Owns the nghttp2 session; the owner creates it (client or server callbacks)
/// and sets `session`. Thread safety: used on the session's strand only.
class h2_pump {
public:
    template <class Executor>
    explicit h2_pump(Executor const& strand) : wake_(strand, std::chrono::steady_clock::time_point::max())
    {
    }
    h2_pump(h2_pump const&) = delete;
    h2_pump& operator=(h2_pump const&) = delete;
    ~h2_pump()
    {
        if (session) nghttp2_session_del(session);
    }

    nghttp2_session* session = nullptr;
    /// Called once when the pump closes (the owner closes its socket and fails its streams).
    std::function<void()> on_end;

    /// The session may have something to send: wakes the write loop.
    void notify() { wake_.cancel(); }
    /// True once either loop ended (peer gone, protocol error, or both sides done).
    bool closed() const noexcept { return closed_; }
    /// Why the connection ended (empty while it runs or after a clean end).
    boost::system::error_code const& reason() const noexcept { return reason_; }

    /// Feeds received bytes to the session until the peer closes or the
    /// session wants no more; then marks the pump closed.
    template <class Stream>
    boost::asio::awaitable<void> read_loop(Stream& s)
    {
        std::array<std::uint8_t, 16384> buf;
        while (!closed_) {
            auto [ec, n] =
                co_await s.async_read_some(boost::asio::buffer(buf), boost::asio::as_tuple(boost::asio::use_awaitable));
            if (ec) {
                end(ec);
                break;
            }
            auto const rv = nghttp2_session_mem_recv(session, buf.data(), n);
            if (rv < 0) {
                end(make_error_code(boost::system::errc::protocol_error));
                break;
            }
            notify();  // acknowledgements, window updates, answers
            if (!nghttp2_session_want_read(session) && !nghttp2_session_want_write(session)) end({});
        }
    }

    /// Sends what the session produces, batched up to 64 KiB a write.
    template <class Stream>
    boost::asio::awaitable<void> write_loop(Stream& s)
    {
        std::string out;
        while (!closed_) {
            out.clear();
            for (;;) {
                std::uint8_t const* data = nullptr;
                auto const n = nghttp2_session_mem_send(session, &data);
                if (n < 0) {
                    end(make_error_code(boost::system::errc::protocol_error));
                    break;
                }
                if (n == 0) break;
                out.append(reinterpret_cast<char const*>(data), static_cast<std::size_t>(n));
                if (out.size() >= 65536) break;
            }
            if (!out.empty()) {
                auto [ec, n] = co_await boost::asio::async_write(s, boost::asio::buffer(out),
                                                                 boost::asio::as_tuple(boost::asio::use_awaitable));
                if (ec) end(ec);
                continue;
            }
            if (closed_) break;
            if (!nghttp2_session_want_read(session) && !nghttp2_session_want_write(session)) {
                end({});  // GOAWAY sent and every stream done
                break;
            }
            wake_.expires_at(std::chrono::steady_clock::time_point::max());
            co_await wake_.async_wait(boost::asio::as_tuple(boost::asio::use_awaitable));
        }
    }

private:
    void end(boost::system::error_code ec)
    {
        if (closed_) return;
        closed_ = true;
        reason_ = ec;
        notify();
        if (on_end) on_end();
    }

    boost::asio::steady_timer wake_;
    bool closed_ = false;
    boost::system::error_code reason_;
};

}  // namespace prism_e2b::protocol

#endif
